package conformance

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/kvshare/kvshare/contract"
)

// The names of a batch are lent to the driver until the operation's
// access ends, and the suite owns the buffers it lends them in: every
// batch it submits carries its names copied into one buffer of the
// suite's own. When the suite first sees the access Ended it writes a
// fresh pattern over that buffer, as a backend reusing the memory would,
// and from then on the key maker reports being handed any of those names:
// a driver that builds a key late (a retry, a log line, a ledger) from a
// borrowed name reads memory that is no longer its to read.
//
// The key maker looks under the book's lock, and the suite overwrites
// under it, so the report does not depend on the race detector and a
// late key built through the key maker is no data race.

// nameBook is one check's record of the names it lent.
type nameBook struct {
	mu      sync.Mutex
	retired []*lentNames // names of operations seen Ended, overwritten
	pending []string     // findings the check's goroutine has not reported
}

// lentNames is the buffer holding the names of one batch the suite
// submitted.
type lentNames struct {
	w        *watch
	buf      []byte
	ends     []int // where each row's name ends in buf
	reported bool  // a late name of the batch was reported
}

// lendNames returns batch with every row's name copied into a buffer of
// its own (an empty name stays as it is), and that buffer.
func lendNames(batch contract.RowBatch) (contract.RowBatch, *lentNames) {
	n := 0
	for _, r := range batch.Rows {
		n += len(r.Name)
	}
	ln := &lentNames{buf: make([]byte, 0, n), ends: make([]int, 0, len(batch.Rows))}
	if batch.Rows == nil {
		return batch, ln
	}
	rows := make([]contract.Row, len(batch.Rows))
	for i, r := range batch.Rows {
		if len(r.Name) > 0 {
			at := len(ln.buf)
			ln.buf = append(ln.buf, r.Name...)
			r.Name = ln.buf[at:len(ln.buf):len(ln.buf)]
		}
		rows[i] = r
		ln.ends = append(ln.ends, len(ln.buf))
	}
	batch.Rows = rows
	return batch, ln
}

// retire writes a fresh pattern (mark) over the names an operation seen
// Ended was lent, and watches them from then on.
func (nb *nameBook) retire(ln *lentNames, mark int) {
	if ln == nil || len(ln.buf) == 0 {
		return
	}
	nb.mu.Lock()
	defer nb.mu.Unlock()
	copy(ln.buf, payload(fmt.Sprintf("names/%d", mark), len(ln.buf)))
	nb.retired = append(nb.retired, ln)
}

// lookLocked records a finding, once per batch, when name lies in the
// names of an operation seen Ended. The caller holds nb.mu.
func (nb *nameBook) lookLocked(name []byte) {
	if len(name) == 0 || len(nb.retired) == 0 {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(name)))
	for _, ln := range nb.retired {
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(ln.buf)))
		if p < lo || p >= lo+uintptr(len(ln.buf)) {
			continue
		}
		if !ln.reported {
			ln.reported = true
			i := 0
			for i < len(ln.ends)-1 && int(p-lo) >= ln.ends[i] {
				i++
			}
			nb.pending = append(nb.pending, fmt.Sprintf("%s: row %d (%s): the key maker was handed the row's name after the operation's access ended (the suite had written a fresh pattern over it when it first saw access Ended): a driver borrows names only until access ends, and copies what it needs longer",
				ln.w.label, i, ln.w.row(i)))
		}
		return
	}
}

// findings returns what the book found and has not reported yet, and
// forgets it.
func (nb *nameBook) findings() []string {
	nb.mu.Lock()
	defer nb.mu.Unlock()
	out := nb.pending
	nb.pending = nil
	return out
}
