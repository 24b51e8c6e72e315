package redistest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// Limits of the RESP reader.
const (
	// maxLine bounds a type line and an inline command, CRLF included.
	maxLine = 64 << 10
	// maxBulk bounds a bulk payload: Redis's default proto-max-bulk-len.
	maxBulk = 512 << 20
	// maxArgs bounds a command's argument count, as Redis does.
	maxArgs = 1 << 20
	// maxDepth bounds how deeply a reply's aggregates nest.
	maxDepth = 1024
	// readChunk is how much a bulk payload grows the buffer by at a time,
	// so a declared length larger than the data does not allocate it.
	readChunk = 1 << 20
)

// errProtocol is wrapped by every error about malformed RESP.
var errProtocol = errors.New("redistest: RESP protocol error")

// frame is an aggregate being read: how many values it still needs, and
// whether it is an attribute (which annotates the value after it and
// does not count as one of its parent's values).
type frame struct {
	left int64
	attr bool
}

// readReply reads one complete RESP2 or RESP3 reply from r and returns
// buf with the reply's exact bytes appended. push reports a push message
// ('>') at the top level; attributes ('|') before a value belong to that
// value's reply. Aggregates are read iteratively, nested at most maxDepth
// deep. Streamed strings and aggregates ("$?", "*?") are refused.
func readReply(r *bufio.Reader, buf []byte) (out []byte, push bool, err error) {
	var stack []frame
	for {
		start := len(buf)
		if buf, err = readLine(r, buf); err != nil {
			return buf, push, err
		}
		line := buf[start : len(buf)-2]
		typ, rest := line[0], line[1:]
		if len(stack) == 0 && typ != '|' {
			push = typ == '>'
		}
		complete := true // a whole value ends with this line (or its payload)
		switch typ {
		case '+', '-':
			// simple string or error: any text on one line
		case ':':
			if _, err := strconv.ParseInt(string(rest), 10, 64); err != nil {
				return buf, push, fmt.Errorf("%w: integer %q", errProtocol, rest)
			}
		case ',':
			if _, err := strconv.ParseFloat(string(rest), 64); err != nil && !errors.Is(err, strconv.ErrRange) {
				return buf, push, fmt.Errorf("%w: double %q", errProtocol, rest)
			}
		case '(':
			if !bigNumber(rest) {
				return buf, push, fmt.Errorf("%w: big number %q", errProtocol, rest)
			}
		case '#':
			if len(rest) != 1 || (rest[0] != 't' && rest[0] != 'f') {
				return buf, push, fmt.Errorf("%w: boolean %q", errProtocol, rest)
			}
		case '_':
			if len(rest) != 0 {
				return buf, push, fmt.Errorf("%w: null with text %q", errProtocol, rest)
			}
		case '$', '!', '=':
			n, err := length(typ, rest, maxBulk)
			if err != nil {
				return buf, push, err
			}
			if n >= 0 {
				if buf, err = readPayload(r, buf, n); err != nil {
					return buf, push, err
				}
			}
		case '*', '%', '~', '>', '|':
			n, err := length(typ, rest, maxArgs*16)
			if err != nil {
				return buf, push, err
			}
			if typ == '%' || typ == '|' {
				n *= 2 // key and value
			}
			if n > 0 {
				if len(stack) == maxDepth {
					return buf, push, fmt.Errorf("%w: aggregates nested deeper than %d", errProtocol, maxDepth)
				}
				stack = append(stack, frame{left: n, attr: typ == '|'})
				complete = false
			} else if typ == '|' {
				complete = false // an empty attribute: the value follows
			}
		default:
			return buf, push, fmt.Errorf("%w: unknown type byte %q", errProtocol, typ)
		}
		if complete && ended(&stack) {
			return buf, push, nil
		}
	}
}

// ended counts one complete value into the open aggregates and reports
// whether the reply is over: the value was the top-level one, or it
// closed every aggregate up to the top.
func ended(stack *[]frame) bool {
	for {
		s := *stack
		if len(s) == 0 {
			return true
		}
		top := &s[len(s)-1]
		if top.left--; top.left > 0 {
			return false
		}
		*stack = s[:len(s)-1]
		if top.attr {
			return false // an attribute ended; the value it annotates follows
		}
	}
}

// length parses the count or size after a '$', '*' or like type byte:
// -1 (null, for '$' and '*' only) up to limit.
func length(typ byte, text []byte, limit int64) (int64, error) {
	if len(text) == 1 && text[0] == '?' {
		return 0, fmt.Errorf("%w: streamed %q types are not supported", errProtocol, typ)
	}
	n, err := strconv.ParseInt(string(text), 10, 64)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%w: length %q after %q", errProtocol, text, typ)
	case n == -1 && (typ == '$' || typ == '*'):
		return -1, nil
	case n < 0 || n > limit:
		return 0, fmt.Errorf("%w: length %d after %q is out of range", errProtocol, n, typ)
	}
	return n, nil
}

// bigNumber reports whether text is an optionally signed run of digits.
func bigNumber(text []byte) bool {
	if len(text) > 0 && (text[0] == '-' || text[0] == '+') {
		text = text[1:]
	}
	if len(text) == 0 {
		return false
	}
	for _, c := range text {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// readLine appends one line ending in CRLF to buf. The line must hold a
// type byte, no lone CR or LF, and fit in maxLine.
func readLine(r *bufio.Reader, buf []byte) ([]byte, error) {
	start := len(buf)
	for {
		chunk, err := r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf)-start > maxLine {
			return buf, fmt.Errorf("%w: line longer than %d bytes", errProtocol, maxLine)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return buf, noEOF(err, len(buf) > start)
		}
	}
	line := buf[start:]
	if len(line) < 3 || line[len(line)-2] != '\r' || bytes.ContainsAny(line[:len(line)-2], "\r\n") {
		return buf, fmt.Errorf("%w: bad line %q", errProtocol, clip(line))
	}
	return buf, nil
}

// readPayload appends n bytes and the CRLF after them to buf, growing it
// a chunk at a time.
func readPayload(r *bufio.Reader, buf []byte, n int64) ([]byte, error) {
	need := int(n) + 2
	for need > 0 {
		step := min(need, readChunk)
		start := len(buf)
		buf = slices.Grow(buf, step)[:start+step]
		got, err := io.ReadFull(r, buf[start:])
		buf = buf[:start+got]
		if err != nil {
			return buf, noEOF(err, true)
		}
		need -= step
	}
	if !bytes.HasSuffix(buf, []byte("\r\n")) {
		return buf, fmt.Errorf("%w: payload of %d bytes not followed by CRLF", errProtocol, n)
	}
	return buf, nil
}

// noEOF turns an EOF in the middle of a message into io.ErrUnexpectedEOF.
func noEOF(err error, midway bool) error {
	if midway && errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// clip shortens b for an error's text.
func clip(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// readCommand reads one client command: a RESP array of bulk strings, or
// an inline command (words on one line). An empty array or line gives no
// arguments and no error.
func readCommand(r *bufio.Reader) ([][]byte, error) {
	first, err := r.Peek(1)
	if err != nil {
		return nil, err
	}
	if first[0] != '*' {
		return readInline(r)
	}
	line, err := readLine(r, nil)
	if err != nil {
		return nil, err
	}
	n, err := strconv.ParseInt(string(line[1:len(line)-2]), 10, 64)
	if err != nil || n > maxArgs {
		return nil, fmt.Errorf("%w: command array header %q", errProtocol, clip(line))
	}
	if n <= 0 {
		return nil, nil
	}
	args := make([][]byte, 0, n)
	for range n {
		line, err := readLine(r, nil)
		if err != nil {
			return nil, noEOF(err, true)
		}
		if line[0] != '$' {
			return nil, fmt.Errorf("%w: command argument is %q, not a bulk string", errProtocol, clip(line))
		}
		size, err := length('$', line[1:len(line)-2], maxBulk)
		if err != nil || size < 0 {
			return nil, fmt.Errorf("%w: command argument header %q", errProtocol, clip(line))
		}
		arg, err := readPayload(r, make([]byte, 0, min(size+2, readChunk)), size)
		if err != nil {
			return nil, noEOF(err, true)
		}
		args = append(args, arg[:size:size])
	}
	return args, nil
}

// readInline reads an inline command: words split by spaces and tabs.
func readInline(r *bufio.Reader) ([][]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, fmt.Errorf("%w: inline command longer than %d bytes", errProtocol, maxLine)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, noEOF(err, true)
		}
	}
	return bytes.Fields(line), nil
}

// writeCommand writes args as a RESP array of bulk strings.
func writeCommand(w *bufio.Writer, args [][]byte) error {
	w.WriteByte('*')
	w.WriteString(strconv.Itoa(len(args)))
	w.WriteString("\r\n")
	for _, a := range args {
		w.WriteByte('$')
		w.WriteString(strconv.Itoa(len(a)))
		w.WriteString("\r\n")
		w.Write(a)
		w.WriteString("\r\n")
	}
	// A bufio.Writer keeps its first error and returns it from every later call.
	_, err := w.Write(nil)
	return err
}
