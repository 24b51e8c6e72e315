package redistest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"testing"
)

// FuzzReadReply feeds arbitrary bytes to the reply reader, which must
// neither panic nor hang and must return each reply's exact bytes; then
// it builds RESP values from the same bytes, encodes them and checks that
// the reader gives back each encoding whole.
func FuzzReadReply(f *testing.F) {
	for _, seed := range []string{
		"+OK\r\n", "$5\r\nhello\r\n", "*2\r\n:1\r\n$-1\r\n", "%1\r\n+a\r\n_\r\n",
		"|1\r\n+a\r\n+b\r\n>1\r\n+x\r\n", "~1\r\n#t\r\n", "=7\r\ntxt:abc\r\n",
		"*3\r\n", "$10\r\nabc", "(-12\r\n,1e3\r\n", "\x00\x01\x02\x03\x04\x05\x06",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Arbitrary bytes: every reply read is a prefix of what is left,
		// and every read consumes bytes, so the loop ends.
		r := bufio.NewReaderSize(bytes.NewReader(data), 16)
		rest := data
		for {
			out, _, err := readReply(r, nil)
			if err != nil {
				break
			}
			if !bytes.HasPrefix(rest, out) || len(out) == 0 {
				t.Fatalf("reply %q is not the next bytes of %q", out, rest)
			}
			rest = rest[len(out):]
		}

		// Round trip: values built from data, encoded, read back whole.
		g := &gen{data: data}
		var stream bytes.Buffer
		var want []encoded
		for range 4 {
			e := g.value(0)
			want = append(want, e)
			stream.Write(e.bytes)
		}
		r = bufio.NewReaderSize(&stream, 16)
		for i, e := range want {
			out, push, err := readReply(r, nil)
			if err != nil {
				t.Fatalf("value %d %q: %v", i, e.bytes, err)
			}
			if !bytes.Equal(out, e.bytes) || push != e.push {
				t.Fatalf("value %d: read %q (push %v), encoded %q (push %v)", i, out, push, e.bytes, e.push)
			}
		}
		if _, _, err := readReply(r, nil); err != io.EOF {
			t.Fatalf("after the values: %v, want io.EOF", err)
		}
	})
}

// encoded is a RESP value's encoding and whether it is a push.
type encoded struct {
	bytes []byte
	push  bool
}

// gen builds RESP values from a byte string read as a stream of choices
// (zeros once it runs out).
type gen struct {
	data []byte
	n    int
}

func (g *gen) byte() byte {
	if g.n >= len(g.data) {
		return 0
	}
	g.n++
	return g.data[g.n-1]
}

func (g *gen) text(crlf bool) []byte {
	n := int(g.byte() % 24)
	b := make([]byte, n)
	for i := range b {
		c := g.byte()
		if !crlf && (c == '\r' || c == '\n') {
			c = ' '
		}
		b[i] = c
	}
	return b
}

// value encodes one value; depth bounds the nesting.
func (g *gen) value(depth int) encoded {
	var b bytes.Buffer
	kind := g.byte() % 17
	if depth > 3 && kind >= 11 {
		kind %= 11 // no more aggregates
	}
	switch kind {
	case 0:
		fmt.Fprintf(&b, "+%s\r\n", g.text(false))
	case 1:
		fmt.Fprintf(&b, "-ERR %s\r\n", g.text(false))
	case 2:
		fmt.Fprintf(&b, ":%d\r\n", int64(g.byte())<<56|int64(g.byte())-128)
	case 3:
		t := g.text(true)
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(t), t)
	case 4:
		b.WriteString("$-1\r\n")
	case 5:
		b.WriteString("_\r\n")
	case 6:
		fmt.Fprintf(&b, ",%g\r\n", float64(int8(g.byte()))/7)
	case 7:
		b.WriteString([]string{"#t\r\n", "#f\r\n"}[g.byte()%2])
	case 8:
		t := g.text(true)
		fmt.Fprintf(&b, "!%d\r\n%s\r\n", len(t), t)
	case 9:
		t := append([]byte("txt:"), g.text(true)...)
		fmt.Fprintf(&b, "=%d\r\n%s\r\n", len(t), t)
	case 10:
		fmt.Fprintf(&b, "(%d%d\r\n", int8(g.byte()), g.byte())
	case 11:
		b.WriteString("*-1\r\n")
	default:
		typ := []byte{'*', '%', '~', '>', '|'}[kind-12]
		n := int(g.byte() % 4)
		fmt.Fprintf(&b, "%c%d\r\n", typ, n)
		items := n
		if typ == '%' || typ == '|' {
			items *= 2
		}
		for range items {
			b.Write(g.value(depth + 1).bytes)
		}
		if typ == '|' { // an attribute annotates the value after it, at its level
			e := g.value(depth)
			b.Write(e.bytes)
			return encoded{bytes: b.Bytes(), push: e.push}
		}
		return encoded{bytes: b.Bytes(), push: typ == '>' && depth == 0}
	}
	return encoded{bytes: b.Bytes()}
}
