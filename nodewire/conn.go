package nodewire

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
)

// Conn reads and writes frames on a Unix stream socket, with the lend's
// fd passed by SCM_RIGHTS. One goroutine reads; any number may write:
// WriteFrame sends each frame whole before the next one starts.
type Conn struct {
	c *net.UnixConn

	// The reader's state.
	hdr [HeaderSize]byte
	oob []byte

	wmu  sync.Mutex
	wbuf []byte
}

// NewConn returns a Conn over c. The Conn owns c from now on.
func NewConn(c *net.UnixConn) *Conn {
	// Room for one fd: a second fits only in the alignment padding, and
	// the kernel closes any beyond what fits (MSG_CTRUNC).
	return &Conn{c: c, oob: make([]byte, syscall.CmsgSpace(4))}
}

// UnixConn returns the socket, for deadlines and peer credentials.
func (c *Conn) UnixConn() *net.UnixConn { return c.c }

// Close closes the socket.
func (c *Conn) Close() error { return c.c.Close() }

// ReadFrame reads one frame whose body is at most maxBody bytes. fd is
// the descriptor a lend carried, -1 on every other frame; the caller owns
// it. At the end of the stream before a frame begins it returns io.EOF.
//
// Any other error leaves the stream unusable: close the Conn. It is a
// *[FrameError] (ErrProtocol, ErrLimit for a body over maxBody, or what
// [Decode] found) or the socket's error; the header is returned when it
// was read. A lend may carry one fd and every other frame none; every fd
// received with a frame that fails is closed. A lend that came without
// its fd is returned with fd -1, for the receiver to refuse (BadLend):
// the stream is intact.
func (c *Conn) ReadFrame(maxBody uint32) (Header, Message, int, error) {
	var in inbound
	defer in.close()
	if n, err := c.readFull(c.hdr[:], &in); err != nil {
		if errors.Is(err, io.EOF) && n == 0 && len(in.fds) == 0 {
			return Header{}, nil, -1, io.EOF
		}
		return Header{}, nil, -1, readErr("header", err)
	}
	h, err := ParseHeader(c.hdr[:], maxBody)
	if err != nil {
		return h, nil, -1, err
	}
	body := make([]byte, h.Len)
	if _, err := c.readFull(body, &in); err != nil {
		return h, nil, -1, readErr(h.Type.String()+": body", err)
	}
	if err := in.check(h.Type); err != nil {
		return h, nil, -1, err
	}
	m, err := Decode(h, body)
	if err != nil {
		return h, nil, -1, err
	}
	return h, m, in.take(), nil
}

// inbound is what arrived besides bytes while one frame was read.
type inbound struct {
	fds    []int
	ctrunc bool
}

// check checks the fds a frame of type t carried.
func (in *inbound) check(t Type) error {
	field := t.String() + ": fd"
	switch n := len(in.fds); {
	case in.ctrunc:
		return frameErr(CodeProtocol, field, "more descriptors than fit (control data truncated)")
	case !t.CarriesFD() && n > 0:
		return frameErr(CodeProtocol, field, fmt.Sprintf("%d descriptors on a frame that may carry none", n))
	case n > 1:
		return frameErr(CodeProtocol, field, fmt.Sprintf("%d descriptors, want at most 1", n))
	}
	return nil
}

// take hands the frame's one fd to the caller, or -1.
func (in *inbound) take() int {
	if len(in.fds) != 1 {
		return -1
	}
	fd := in.fds[0]
	in.fds = nil
	return fd
}

// close closes every fd not taken.
func (in *inbound) close() {
	for _, fd := range in.fds {
		syscall.Close(fd)
	}
	in.fds = nil
}

func readErr(field string, err error) error {
	if errors.Is(err, io.EOF) {
		return frameErr(CodeProtocol, field, "truncated: the stream ended inside a frame")
	}
	return fmt.Errorf("nodewire: read %s: %w", field, err)
}

// readFull fills p from the socket and records what came with it in in.
// It never reads past p, so an fd that arrives belongs to this frame. It
// returns how many bytes it read.
func (c *Conn) readFull(p []byte, in *inbound) (int, error) {
	got := 0
	for got < len(p) {
		n, oobn, flags, _, err := c.c.ReadMsgUnix(p[got:], c.oob)
		got += n
		if oobn > 0 {
			in.collect(c.oob[:oobn])
		}
		if flags&syscall.MSG_CTRUNC != 0 {
			in.ctrunc = true
		}
		if err != nil {
			return got, err
		}
		if n == 0 {
			return got, io.EOF
		}
	}
	return got, nil
}

// collect keeps every fd of SCM_RIGHTS messages in oob. Control messages
// of other kinds carry no fd and are ignored.
func (in *inbound) collect(oob []byte) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		in.ctrunc = true // unparsable control data: refuse the frame
		return
	}
	for _, m := range msgs {
		if m.Header.Level != syscall.SOL_SOCKET || m.Header.Type != syscall.SCM_RIGHTS {
			continue
		}
		fds, err := syscall.ParseUnixRights(&m)
		if err != nil {
			in.ctrunc = true
			continue
		}
		in.fds = append(in.fds, fds...)
	}
}

// TryWriteFrame is WriteFrame for a writer that must not wait (m carries
// no fd): it makes one write of the frame that the socket takes at once,
// or not at all, and returns the bytes it did not take — nil when it
// took the whole frame. The caller writes them with WriteRest before
// any other frame. An error leaves the stream unusable, as WriteFrame's.
func (c *Conn) TryWriteFrame(request uint64, m Message) (rest []byte, err error) {
	if m.Type().CarriesFD() {
		return nil, fmt.Errorf("nodewire: write %v: no fd", m.Type())
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	frame, err := c.encodeLocked(request, m)
	if err != nil {
		return nil, err
	}
	raw, err := c.c.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("nodewire: write %v: %w", m.Type(), err)
	}
	n, werr := 0, error(nil)
	if err := raw.Write(func(fd uintptr) bool {
		n, werr = syscall.Write(int(fd), frame)
		return true // one try: a socket that would block takes the rest later
	}); err != nil {
		return nil, fmt.Errorf("nodewire: write %v: %w", m.Type(), err)
	}
	switch {
	case errors.Is(werr, syscall.EAGAIN) || errors.Is(werr, syscall.EINTR):
		n = 0
	case werr != nil:
		return nil, fmt.Errorf("nodewire: write %v: %w", m.Type(), werr)
	}
	if n >= len(frame) {
		return nil, nil
	}
	return append([]byte(nil), frame[n:]...), nil
}

// WriteRest writes, whole, the rest of a frame TryWriteFrame began.
func (c *Conn) WriteRest(rest []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for len(rest) > 0 {
		n, err := c.c.Write(rest)
		if err != nil {
			return fmt.Errorf("nodewire: write: %w", err)
		}
		rest = rest[n:]
	}
	return nil
}

// encodeLocked encodes m as a frame into the Conn's write buffer.
func (c *Conn) encodeLocked(request uint64, m Message) ([]byte, error) {
	frame, err := AppendFrame(c.wbuf[:0], request, m)
	if err != nil {
		return nil, err
	}
	c.wbuf = frame
	if cap(c.wbuf) > 1<<20 {
		c.wbuf = nil // keep no large buffer between frames
	}
	return frame, nil
}

// WriteFrame writes m as one frame with request id request, with fd
// passed by SCM_RIGHTS when fd >= 0 (a lend only; the caller keeps its
// fd). Frames of concurrent writers never interleave. A failed write may
// have sent part of the frame: close the Conn.
func (c *Conn) WriteFrame(request uint64, m Message, fd int) error {
	if fd >= 0 && !m.Type().CarriesFD() {
		return fmt.Errorf("nodewire: write %v: an fd on a frame that may carry none", m.Type())
	}
	if fd < 0 && m.Type().CarriesFD() {
		return fmt.Errorf("nodewire: write %v: no fd", m.Type())
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	frame, err := c.encodeLocked(request, m)
	if err != nil {
		return err
	}
	if fd >= 0 {
		n, _, err := c.c.WriteMsgUnix(frame, syscall.UnixRights(fd), nil)
		if err != nil {
			return fmt.Errorf("nodewire: write %v: %w", m.Type(), err)
		}
		frame = frame[n:] // the fd went with the first byte
	}
	for len(frame) > 0 {
		n, err := c.c.Write(frame)
		if err != nil {
			return fmt.Errorf("nodewire: write %v: %w", m.Type(), err)
		}
		frame = frame[n:]
	}
	return nil
}
