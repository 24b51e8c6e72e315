package redisdrv

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// errWrong stands for an error reply and errConn for a failed
// connection: both are Fault. The out-of-memory reply, the one error
// with a verdict of its own, comes from a real server (the tests over
// a server with maxmemory), since only the client makes its errors.
var (
	errWrong = errors.New("WRONGTYPE Operation against a key holding the wrong kind of value")
	errConn  = errors.New("read tcp 127.0.0.1:1: i/o timeout")
)

func TestPutVerdicts(t *testing.T) {
	ok := answer{text: "OK"}
	for _, tc := range []struct {
		name        string
		set, strlen answer
		want        contract.RowStatus
	}{
		{"stored", ok, answer{text: "100"}, contract.Ready},
		{"stored, then gone", ok, answer{text: "0"}, contract.Ready},
		{"there already, same length", answer{err: rueidis.Nil}, answer{text: "100"}, contract.Ready},
		{"there already, vanished before STRLEN", answer{err: rueidis.Nil}, answer{text: "0"}, contract.NotReady},
		{"there already, another length", answer{err: rueidis.Nil}, answer{text: "99"}, contract.Fault},
		{"there already, STRLEN failed", answer{err: rueidis.Nil}, answer{err: errWrong}, contract.Fault},
		{"there already, STRLEN unreadable", answer{err: rueidis.Nil}, answer{text: "x"}, contract.Fault},
		{"another error reply", answer{err: errWrong}, answer{err: errWrong}, contract.Fault},
		{"connection failed", answer{err: errConn}, answer{err: errConn}, contract.Fault},
		{"an answer SET never gives", answer{text: "QUEUED"}, answer{text: "100"}, contract.Fault},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, putVerdict(tc.set, tc.strlen, 100))
		})
	}
	assert.False(t, isOutOfMemory(errWrong), "only the client's own error replies are the server's refusals")
	assert.False(t, isOutOfMemory(errConn))
}

// slot is a row's span inside a guarded buffer: bytes before and after
// it must never change.
type slot struct {
	buf  []byte
	span contract.Span
}

func newSlot(n int) *slot {
	buf := bytes.Repeat([]byte{0xEE}, n+32)
	return &slot{buf: buf, span: contract.Span{Addr: spanBase(buf[16:]), Len: int64(n)}}
}

func (s *slot) row() []byte { return s.buf[16 : 16+s.span.Len] }

func (s *slot) guardsIntact(t *testing.T) {
	t.Helper()
	assert.Equal(t, bytes.Repeat([]byte{0xEE}, 16), s.buf[:16], "nothing before the row is touched")
	assert.Equal(t, bytes.Repeat([]byte{0xEE}, 16), s.buf[16+s.span.Len:], "nothing after the row is touched")
}

// The value's length comes first (the LimitedReader's N, from the RESP
// header): a longer value writes nothing, a shorter one its head, an
// exact one the row.
func TestSlotWriterLearnsTheLengthFirst(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value []byte
		want  contract.RowStatus
		row   func(*slot) []byte
	}{
		{"exact", bytes.Repeat([]byte{1}, 8), contract.Ready, func(s *slot) []byte { return bytes.Repeat([]byte{1}, 8) }},
		{"longer writes nothing", bytes.Repeat([]byte{2}, 9), contract.Fault, func(s *slot) []byte { return bytes.Repeat([]byte{0xEE}, 8) }},
		{"much longer writes nothing", bytes.Repeat([]byte{2}, 4096), contract.Fault, func(s *slot) []byte { return bytes.Repeat([]byte{0xEE}, 8) }},
		{"shorter writes its head", []byte{3, 3, 3}, contract.Fault, func(s *slot) []byte { return append([]byte{3, 3, 3}, bytes.Repeat([]byte{0xEE}, 5)...) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSlot(8)
			var w slotWriter
			w.reset(s.span)
			src := bytes.NewReader(tc.value)
			_, err := io.Copy(&w, &io.LimitedReader{R: src, N: int64(len(tc.value))})
			assert.Equal(t, tc.want, getVerdict(&w, err))
			assert.Equal(t, tc.row(s), s.row())
			s.guardsIntact(t)
			if len(tc.value) > 8 {
				assert.Equal(t, int64(len(tc.value)), int64(src.Len()), "not one byte of a longer value is read")
				assert.ErrorIs(t, err, errLongerThanRow)
			}
		})
	}
}

// A client that handed the value without its length (not an
// *io.LimitedReader) gets nothing written; a reply that is not a value
// is refused.
func TestSlotWriterRefusesWhatItCannotMeasure(t *testing.T) {
	s := newSlot(8)
	var w slotWriter
	w.reset(s.span)
	n, err := w.ReadFrom(strings.NewReader("12345678"))
	assert.Zero(t, n)
	assert.ErrorIs(t, err, errLengthUnknown)
	_, err = w.Write([]byte("OK"))
	assert.ErrorIs(t, err, errNotAValue)
	assert.Equal(t, contract.Fault, getVerdict(&w, err))
	assert.Equal(t, bytes.Repeat([]byte{0xEE}, 8), s.row())
	s.guardsIntact(t)
}

// A value in chunks lands chunk after chunk, and a chunk that would pass
// the row's end writes nothing of itself.
func TestSlotWriterChunks(t *testing.T) {
	s := newSlot(8)
	var w slotWriter
	w.reset(s.span)
	_, err := w.ReadFrom(&io.LimitedReader{R: strings.NewReader("abcd"), N: 4})
	require.NoError(t, err)
	_, err = w.ReadFrom(&io.LimitedReader{R: strings.NewReader("efghi"), N: 5})
	require.ErrorIs(t, err, errLongerThanRow)
	assert.Equal(t, []byte("abcd\xee\xee\xee\xee"), s.row())
	s.guardsIntact(t)
}

func TestGetVerdicts(t *testing.T) {
	s := newSlot(4)
	var w slotWriter
	w.reset(s.span)
	assert.Equal(t, contract.Miss, getVerdict(&w, rueidis.Nil))
	assert.Equal(t, contract.Fault, getVerdict(&w, errWrong))
	assert.Equal(t, contract.Fault, getVerdict(&w, errConn))
	assert.Equal(t, contract.Fault, getVerdict(&w, nil), "an empty value is short")
}

func TestReplyText(t *testing.T) {
	var r reply
	_, err := io.Copy(&r, &io.LimitedReader{R: strings.NewReader("12"), N: 2})
	require.NoError(t, err)
	assert.Equal(t, "12", string(r.buf[:r.n]))
	r.n = 0
	_, err = r.ReadFrom(&io.LimitedReader{R: strings.NewReader(strings.Repeat("x", maxText+1)), N: maxText + 1})
	assert.ErrorIs(t, err, errLongText, "a value where an answer was due is not read")
	_, err = r.Write(bytes.Repeat([]byte("y"), maxText+1))
	assert.ErrorIs(t, err, errLongText)
	assert.Equal(t, "nil", answer{err: rueidis.Nil}.String())
	assert.Equal(t, "OK", answer{text: "OK"}.String())
	assert.Equal(t, "3 bytes", answer{n: 3}.String())
}
