package redisdrv

import (
	"errors"
	"fmt"
	"io"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/redisdrv/internal/slotmem"
)

// The refusals of a slotWriter.
var (
	// errLongerThanRow: the value is longer than the row; not one byte of
	// it was written.
	errLongerThanRow = errors.New("redisdrv: the value is longer than the row")
	// errLengthUnknown: the client handed the value without its length
	// first; not one byte was written.
	errLengthUnknown = errors.New("redisdrv: the client handed the value without its length")
	// errNotAValue: the reply is not a bulk string (an integer, a simple
	// string).
	errNotAValue = errors.New("redisdrv: the reply is not a value")
)

// slotWriter is where a get's value lands: the row's span, written in
// place. The client (rueidis's RedisResultStream.WriteTo) hands a bulk
// string as an *io.LimitedReader whose N is the value's length, read
// from the RESP header, before any of its bytes are read: so the writer
// refuses a value longer than the row having written nothing, and reads
// a shorter one into the slot's head.
type slotWriter struct {
	slot    []byte
	written int64
	length  int64 // the value's length as the header gave it; -1 before
}

var _ io.ReaderFrom = (*slotWriter)(nil)

// reset aims the writer at a row's span.
func (w *slotWriter) reset(s contract.Span) {
	w.slot, w.written, w.length = slotmem.Bytes(s.Addr, s.Len), 0, -1
}

// ReadFrom reads one value (or, for a value the server sends in chunks,
// one chunk) into the slot after what was written already.
func (w *slotWriter) ReadFrom(src io.Reader) (int64, error) {
	lr, ok := src.(*io.LimitedReader)
	if !ok {
		return 0, errLengthUnknown
	}
	end := w.written + lr.N
	w.length = end
	if end > int64(len(w.slot)) {
		return 0, fmt.Errorf("%w: %d bytes into a row of %d", errLongerThanRow, end, len(w.slot))
	}
	n, err := io.ReadFull(lr, w.slot[w.written:end])
	w.written += int64(n)
	return int64(n), err
}

// Write refuses: a value comes through ReadFrom, so a Write is a reply
// of another kind.
func (w *slotWriter) Write([]byte) (int, error) { return 0, errNotAValue }

// whole reports whether the value filled the row exactly.
func (w *slotWriter) whole() bool { return w.written == int64(len(w.slot)) && w.length == w.written }
