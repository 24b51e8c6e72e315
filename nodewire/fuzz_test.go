package nodewire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// seedFrames adds every vector's frame, good and bad, to f's corpus.
func seedFrames(f *testing.F) {
	for _, g := range goodVectors() {
		frame, err := AppendFrame(nil, g.request, g.msg)
		require.NoError(f, err)
		f.Add(frame)
	}
	for _, b := range badVectors() {
		f.Add(b.frame)
	}
}

// FuzzDecodeFrame: any bytes either decode, and then encode back to
// exactly the same bytes (the encoding is canonical), or fail with a
// *FrameError that names a field and matches one code's sentinel; never
// a panic.
func FuzzDecodeFrame(f *testing.F) {
	seedFrames(f)
	f.Fuzz(func(t *testing.T, frame []byte) {
		h, m, err := DecodeFrame(frame, 1<<20)
		if err != nil {
			requireFrameError(t, err)
			return
		}
		require.Equal(t, h.Type, m.Type())
		again, err := AppendFrame(nil, h.Request, m)
		require.NoError(t, err)
		require.Equal(t, hex.EncodeToString(frame), hex.EncodeToString(again))
	})
}

// FuzzDecode: Decode of any body under any known type either fails with
// a *FrameError or gives a message whose body encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	for _, g := range goodVectors() {
		f.Add(uint16(g.msg.Type()), g.msg.AppendBody(nil))
	}
	f.Fuzz(func(t *testing.T, typ uint16, body []byte) {
		m, err := Decode(Header{Type: Type(typ), Len: uint32(len(body)), Request: 1}, body)
		if err != nil {
			requireFrameError(t, err)
			return
		}
		require.True(t, Type(typ).Known())
		require.Equal(t, Type(typ), m.Type())
		require.True(t, bytes.Equal(body, m.AppendBody(nil)), "re-encoded body differs")
	})
}

// FuzzParseHeader: a header that parses re-encodes to the same 16 bytes
// and passes Check; one that does not fails with a *FrameError.
func FuzzParseHeader(f *testing.F) {
	seedFrames(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHeader(b, 1<<16)
		if err != nil {
			requireFrameError(t, err)
			if len(b) >= HeaderSize {
				require.Equal(t, b[:HeaderSize], h.Append(nil), "the header is returned with its error")
			}
			return
		}
		require.Equal(t, b[:HeaderSize], h.Append(nil))
		require.NoError(t, h.Check(1<<16))
		require.True(t, h.Type.Known())
		require.Zero(t, h.Flags)
	})
}

// FuzzNames: the names kind either fails with a *FrameError or decodes
// to non-empty names that encode back to the same bytes.
func FuzzNames(f *testing.F) {
	f.Add(appendNames(nil, names("a", "bb", "ccc")))
	f.Add(appendNames(nil, nil))
	f.Add(body(u32b(2), u32b(5), u32b(3), []byte("abcde")))
	f.Add(body(u32b(2), u32b(3), u32b(3), []byte("abc")))
	f.Add(body(u32b(0xffffffff)))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := &fields{b: b}
		ns := r.names("names")
		if err := r.done("names"); err != nil {
			requireFrameError(t, err)
			return
		}
		for i, n := range ns {
			require.NotEmpty(t, n, "name %d", i)
		}
		require.Equal(t, b, appendNames(nil, ns))
	})
}

func requireFrameError(t *testing.T, err error) {
	t.Helper()
	fe, ok := errors.AsType[*FrameError](err)
	require.True(t, ok, "%v is not a *FrameError", err)
	require.True(t, fe.Code.Known(), "%v", err)
	require.NotEmpty(t, fe.Field, "%v", err)
	require.ErrorIs(t, err, fe.Code.Err())
	require.Equal(t, fe.Code, CodeOf(err))
}

// FuzzReadFrame: a Conn fed any bytes reads frames that re-encode to
// exactly the bytes they came from, until a clean io.EOF at a frame's
// end or a *FrameError; never a panic, never a frame out of thin air.
func FuzzReadFrame(f *testing.F) {
	seedFrames(f)
	two := frameOfF(f, 1, &Stats{})
	f.Add(append(two, frameOfF(f, 2, &Return{Lend: 1})...))
	f.Fuzz(func(t *testing.T, stream []byte) {
		a, b := socketPair(t)
		written := make(chan error, 1)
		go func() {
			_, err := a.Write(stream)
			if err == nil {
				err = a.CloseWrite()
			}
			written <- err
		}()
		r := NewConn(b)
		off := 0
		for {
			h, m, fd, err := r.ReadFrame(1 << 16)
			require.Equal(t, -1, fd)
			if errors.Is(err, io.EOF) {
				require.Equal(t, len(stream), off, "EOF only at a frame's end")
				break
			}
			if err != nil {
				requireFrameError(t, err)
				break
			}
			again, err := AppendFrame(nil, h.Request, m)
			require.NoError(t, err)
			require.Equal(t, stream[off:off+len(again)], again)
			off += len(again)
		}
		require.NoError(t, b.Close()) // a writer blocked on a full socket returns
		<-written
	})
}

func frameOfF(f *testing.F, request uint64, m Message) []byte {
	b, err := AppendFrame(nil, request, m)
	require.NoError(f, err)
	return b
}
