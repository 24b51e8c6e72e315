package nodewire

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/patience"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// socketPair returns the two ends of a connected Unix stream socket, each
// as a *net.UnixConn closed at the test's end.
func socketPair(t *testing.T) (*net.UnixConn, *net.UnixConn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	conn := func(fd int) *net.UnixConn {
		f := os.NewFile(uintptr(fd), "socketpair")
		c, err := net.FileConn(f)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		t.Cleanup(func() { c.Close() })
		return c.(*net.UnixConn)
	}
	return conn(fds[0]), conn(fds[1])
}

// passable is an fd to pass: the write end of a pipe. closedEverywhere
// proves that no copy of it is left open, once the test closed its own.
type passable struct {
	r, w *os.File
}

func newPassable(t *testing.T) *passable {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(); w.Close() })
	return &passable{r: r, w: w}
}

func (p *passable) fd() int { return int(p.w.Fd()) }

// requireClosedEverywhere closes the test's copy of the write end and
// requires the read end to see the end of the pipe: every copy, the one
// passed included, is closed.
func (p *passable) requireClosedEverywhere(t *testing.T) {
	t.Helper()
	require.NoError(t, p.w.Close())
	require.NoError(t, p.r.SetReadDeadline(time.Now().Add(patience.Wait())))
	_, err := p.r.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF, "a copy of the passed fd is still open")
}

// rawSend writes b on c in one sendmsg, with fds passed by SCM_RIGHTS.
func rawSend(t *testing.T, c *net.UnixConn, b []byte, fds ...int) {
	t.Helper()
	var oob []byte
	if len(fds) > 0 {
		oob = syscall.UnixRights(fds...)
	}
	n, _, err := c.WriteMsgUnix(b, oob, nil)
	require.NoError(t, err)
	require.Equal(t, len(b), n)
}

func frameOf(t *testing.T, request uint64, m Message) []byte {
	t.Helper()
	b, err := AppendFrame(nil, request, m)
	require.NoError(t, err)
	return b
}

// TestConnRoundTrip: every good vector's message crosses the socket
// whole; the lend brings a working fd that the reader owns and the
// writer keeps its own.
func TestConnRoundTrip(t *testing.T) {
	a, b := socketPair(t)
	w, r := NewConn(a), NewConn(b)
	p := newPassable(t)
	for _, g := range goodVectors() {
		fd := -1
		if g.msg.Type().CarriesFD() {
			fd = p.fd()
		}
		require.NoError(t, w.WriteFrame(g.request, g.msg, fd), g.name)
		h, m, gotFD, err := r.ReadFrame(1 << 16)
		require.NoError(t, err, g.name)
		assert.Equal(t, g.request, h.Request, g.name)
		assert.Equal(t, g.msg, m, g.name)
		if fd < 0 {
			assert.Equal(t, -1, gotFD, g.name)
			continue
		}
		require.GreaterOrEqual(t, gotFD, 0, g.name)
		passed := os.NewFile(uintptr(gotFD), "passed")
		_, err = passed.Write([]byte("x"))
		require.NoError(t, err)
		require.NoError(t, passed.Close())
		got := make([]byte, 1)
		_, err = io.ReadFull(p.r, got)
		require.NoError(t, err)
		assert.Equal(t, "x", string(got), "the fd received is the pipe passed")
	}
	// The writer's fd is still its own.
	_, err := p.w.Write([]byte("y"))
	require.NoError(t, err)
}

// TestConnFDBelongsToItsFrame: with a plain frame and a lend both queued
// in the socket, the plain frame reads with no fd and the lend with its
// own, since the reader never reads past the frame it reads.
func TestConnFDBelongsToItsFrame(t *testing.T) {
	a, b := socketPair(t)
	p := newPassable(t)
	rawSend(t, a, frameOf(t, 1, &Stats{}))
	rawSend(t, a, frameOf(t, 2, &Lend{SlotBytes: 4096, SlotCount: 1, Regions: 1}), p.fd())
	r := NewConn(b)
	h, _, fd, err := r.ReadFrame(1 << 16)
	require.NoError(t, err)
	assert.Equal(t, TypeStats, h.Type)
	assert.Equal(t, -1, fd)
	h, _, fd, err = r.ReadFrame(1 << 16)
	require.NoError(t, err)
	assert.Equal(t, TypeLend, h.Type)
	require.GreaterOrEqual(t, fd, 0)
	require.NoError(t, syscall.Close(fd))
	p.requireClosedEverywhere(t)
}

// TestConnLendFDMidFrame: a lend whose fd travels with its body, sent
// apart from its header, is a lend with its fd.
func TestConnLendFDMidFrame(t *testing.T) {
	a, b := socketPair(t)
	p := newPassable(t)
	frame := frameOf(t, 2, &Lend{SlotBytes: 4096, SlotCount: 1, Regions: 1})
	rawSend(t, a, frame[:HeaderSize+3])
	rawSend(t, a, frame[HeaderSize+3:], p.fd())
	_, m, fd, err := NewConn(b).ReadFrame(1 << 16)
	require.NoError(t, err)
	assert.Equal(t, &Lend{SlotBytes: 4096, SlotCount: 1, Regions: 1}, m)
	require.GreaterOrEqual(t, fd, 0)
	require.NoError(t, syscall.Close(fd))
	p.requireClosedEverywhere(t)
}

// TestConnBadFDs: every frame with descriptors it may not carry is a
// protocol error naming the fd, and every descriptor that arrived with it
// is closed.
func TestConnBadFDs(t *testing.T) {
	lend := &Lend{SlotBytes: 4096, SlotCount: 1, Regions: 1}
	tests := []struct {
		name   string
		msg    Message
		fds    int
		field  string
		reason string
	}{
		{"fd on stats", &Stats{}, 1, "stats: fd", "1 descriptors on a frame that may carry none"},
		{"fd on hello", &Hello{Version: 1, Engine: "e"}, 1, "hello: fd", "1 descriptors on a frame that may carry none"},
		{"fd on publish", &Transfer{Dir: contract.PutDir, Lend: 1}, 1, "publish: fd", "1 descriptors on a frame that may carry none"},
		{"two fds on stats", &Stats{}, 2, "stats: fd", "2 descriptors on a frame that may carry none"},
		{"two fds on a lend", lend, 2, "lend: fd", "2 descriptors, want at most 1"},
		{"three fds on a lend", lend, 3, "lend: fd", "more descriptors than fit (control data truncated)"},
		{"eight fds on stats", &Stats{}, 8, "stats: fd", "more descriptors than fit (control data truncated)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := socketPair(t)
			ps := make([]*passable, tt.fds)
			fds := make([]int, tt.fds)
			for i := range ps {
				ps[i] = newPassable(t)
				fds[i] = ps[i].fd()
			}
			rawSend(t, a, frameOf(t, 1, tt.msg), fds...)
			h, m, fd, err := NewConn(b).ReadFrame(1 << 16)
			require.Error(t, err)
			assert.Equal(t, tt.msg.Type(), h.Type)
			assert.Nil(t, m)
			assert.Equal(t, -1, fd)
			assert.ErrorIs(t, err, ErrProtocol)
			assert.EqualError(t, err, "nodewire: "+tt.field+": "+tt.reason)
			for _, p := range ps {
				p.requireClosedEverywhere(t)
			}
		})
	}
}

// TestConnBadFrames: a frame refused by its header or body, or cut
// short, fails with the error naming what was wrong, and its fd is
// closed.
func TestConnBadFrames(t *testing.T) {
	lendBody := (&Lend{SlotBytes: 4096, SlotCount: 1, Regions: 1}).AppendBody(nil)
	tests := []struct {
		name  string
		bytes []byte
		fd    bool
		code  Code
		error string
	}{
		{"oversize", Header{Len: 1 << 17, Type: TypeLend, Request: 1}.Append(nil), true,
			CodeLimitExceeded, "nodewire: header: body_len: 131072 bytes over the limit of 65536"},
		{"unknown type", rawFrame(0x7f, 0, 1, nil), true,
			CodeProtocol, "nodewire: header: type: unknown type 0x007f"},
		{"lend with trailing bytes", rawFrame(TypeLend, 0, 1, append(lendBody, 1)), true,
			CodeProtocol, "nodewire: lend: 1 bytes left over after the last field"},
		{"ends inside the header", frameOf(t, 1, &Stats{})[:7], true,
			CodeProtocol, "nodewire: header: truncated: the stream ended inside a frame"},
		{"ends inside the body", rawFrame(TypeLend, 0, 1, lendBody)[:HeaderSize+5], true,
			CodeProtocol, "nodewire: lend: body: truncated: the stream ended inside a frame"},
		{"ends after the header", rawFrame(TypeLend, 0, 1, lendBody)[:HeaderSize], false,
			CodeProtocol, "nodewire: lend: body: truncated: the stream ended inside a frame"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := socketPair(t)
			var p *passable
			if tt.fd {
				p = newPassable(t)
				rawSend(t, a, tt.bytes, p.fd())
			} else {
				rawSend(t, a, tt.bytes)
			}
			require.NoError(t, a.CloseWrite())
			_, m, fd, err := NewConn(b).ReadFrame(1 << 16)
			assert.Nil(t, m)
			assert.Equal(t, -1, fd)
			assert.EqualError(t, err, tt.error)
			assert.Equal(t, tt.code, CodeOf(err))
			assert.ErrorIs(t, err, tt.code.Err())
			if p != nil {
				p.requireClosedEverywhere(t)
			}
		})
	}
}

// TestConnLendWithoutFD: a lend that came without its fd is read whole,
// with fd -1, for the node to refuse; the stream goes on.
func TestConnLendWithoutFD(t *testing.T) {
	a, b := socketPair(t)
	lend := &Lend{SlotBytes: 4096, SlotCount: 1, Regions: 1}
	rawSend(t, a, frameOf(t, 1, lend))
	rawSend(t, a, frameOf(t, 2, &Stats{}))
	r := NewConn(b)
	h, m, fd, err := r.ReadFrame(1 << 16)
	require.NoError(t, err)
	assert.Equal(t, TypeLend, h.Type)
	assert.Equal(t, lend, m)
	assert.Equal(t, -1, fd)
	h, _, _, err = r.ReadFrame(1 << 16)
	require.NoError(t, err)
	assert.Equal(t, uint64(2), h.Request)
}

// TestConnEOF: the stream's end between frames is io.EOF, not an error
// of the protocol.
func TestConnEOF(t *testing.T) {
	a, b := socketPair(t)
	w, r := NewConn(a), NewConn(b)
	require.NoError(t, w.WriteFrame(1, &Stats{}, -1))
	require.NoError(t, a.CloseWrite())
	_, _, _, err := r.ReadFrame(1 << 16)
	require.NoError(t, err)
	_, _, fd, err := r.ReadFrame(1 << 16)
	assert.Equal(t, io.EOF, err)
	assert.Equal(t, -1, fd)
}

// TestConnWriteRefusesFDs: WriteFrame sends an fd with a lend only, and a
// lend only with one; nothing is sent when it refuses.
func TestConnWriteRefusesFDs(t *testing.T) {
	a, _ := socketPair(t)
	w := NewConn(a)
	p := newPassable(t)
	err := w.WriteFrame(1, &Stats{}, p.fd())
	assert.EqualError(t, err, "nodewire: write stats: an fd on a frame that may carry none")
	err = w.WriteFrame(1, &Lend{SlotBytes: 1, SlotCount: 1, Regions: 1}, -1)
	assert.EqualError(t, err, "nodewire: write lend: no fd")
	err = w.WriteFrame(1, &Transfer{Lend: 1}, -1)
	assert.EqualError(t, err, "nodewire: encode: type 0x0000: not a message of version 1")
}

// TestConnConcurrentWriters: frames from many writers at once, some far
// larger than the socket's buffer, arrive whole and unmixed.
func TestConnConcurrentWriters(t *testing.T) {
	a, b := socketPair(t)
	w, r := NewConn(a), NewConn(b)
	const writers, frames = 4, 6
	msgFor := func(writer, i int) Message {
		rows := 1 + (writer*frames+i)%3*15000 // up to 30,001 rows: ~600 KB, over the socket's buffer
		g := Group{Region: uint32(writer), Slots: make([]uint32, rows), Names: make([][]byte, rows)}
		for j := range rows {
			g.Slots[j] = uint32(i)
			g.Names[j] = appendU32(appendU32(nil, uint32(writer*frames+i)), uint32(j)) // unique per row
		}
		return &Transfer{Dir: contract.PutDir, Lend: uint32(i + 1), Groups: []Group{g}}
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for writer := range writers {
		wg.Go(func() {
			for i := range frames {
				if err := w.WriteFrame(uint64(writer*frames+i+1), msgFor(writer, i), -1); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	seen := make(map[uint64]bool)
	for range writers * frames {
		h, m, _, err := r.ReadFrame(1 << 24)
		require.NoError(t, err)
		writer, i := int(h.Request-1)/frames, int(h.Request-1)%frames
		require.False(t, seen[h.Request], "request %d twice", h.Request)
		seen[h.Request] = true
		require.Equal(t, msgFor(writer, i), m, "request %d", h.Request)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// TestConnReadClosed: a read on a closed socket reports the
// socket's error, not the protocol's.
func TestConnReadClosed(t *testing.T) {
	_, b := socketPair(t)
	r := NewConn(b)
	require.NoError(t, r.Close())
	_, _, _, err := r.ReadFrame(1 << 16)
	require.Error(t, err)
	assert.True(t, errors.Is(err, net.ErrClosed), "%v", err)
	assert.Zero(t, CodeOf(err))
}
