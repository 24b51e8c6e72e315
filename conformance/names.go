package conformance

import (
	"cmp"
	"fmt"
	"slices"
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
//
// A lookup's names are lent the same way, only until Lookup returns
// (contract.LookupBatch): every lookup the suite makes carries its names
// copied into a buffer of its own, written over and watched the moment
// Lookup returned, whether it answered, refused, or abandoned its call
// at its context's end.

// nameBook is one check's record of the names it lent.
type nameBook struct {
	mu sync.Mutex
	// retired holds the names of operations seen Ended and of lookups
	// that returned, overwritten, in the order of their buffers'
	// addresses (see lookLocked).
	retired []*lentNames
	pending []string // findings the check's goroutine has not reported
}

// lentNames is the buffer holding the names of one batch the suite
// submitted (w) or of one lookup it made (p).
type lentNames struct {
	w        *watch
	p        *probe
	buf      []byte
	ends     []int   // where each row's name ends in buf
	lo       uintptr // where buf starts, once retired
	reported bool    // a late name of the batch was reported
}

// lendLookupNames returns the names of p's batch copied into a buffer of
// their own (an empty name stays as it is), and that buffer: what one
// lookup is lent.
func lendLookupNames(p *probe) ([][]byte, *lentNames) {
	n := 0
	for _, name := range p.batch.Names {
		n += len(name)
	}
	ln := &lentNames{p: p, buf: make([]byte, 0, n), ends: make([]int, 0, len(p.batch.Names))}
	if p.batch.Names == nil {
		return nil, ln
	}
	names := make([][]byte, len(p.batch.Names))
	for i, name := range p.batch.Names {
		names[i] = name
		if len(name) > 0 {
			at := len(ln.buf)
			ln.buf = append(ln.buf, name...)
			names[i] = ln.buf[at:len(ln.buf):len(ln.buf)]
		}
		ln.ends = append(ln.ends, len(ln.buf))
	}
	return names, ln
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
	ln.lo = uintptr(unsafe.Pointer(unsafe.SliceData(ln.buf)))
	at, _ := slices.BinarySearchFunc(nb.retired, ln.lo, func(x *lentNames, lo uintptr) int { return cmp.Compare(x.lo, lo) })
	nb.retired = slices.Insert(nb.retired, at, ln)
}

// lookLocked records a finding, once per batch, when name lies in the
// names of an operation seen Ended or of a lookup that returned. The
// retired buffers are kept in address order and never overlap, so the
// one that may hold name is found by a binary search: a check that
// makes many lookups pays no scan for every key. The caller holds
// nb.mu.
func (nb *nameBook) lookLocked(name []byte) {
	if len(name) == 0 || len(nb.retired) == 0 {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(name)))
	at, found := slices.BinarySearchFunc(nb.retired, p, func(x *lentNames, p uintptr) int { return cmp.Compare(x.lo, p) })
	if !found {
		if at == 0 {
			return
		}
		at-- // the last buffer starting below p
	}
	ln := nb.retired[at]
	if p >= ln.lo+uintptr(len(ln.buf)) || ln.reported {
		return
	}
	ln.reported = true
	i := 0
	for i < len(ln.ends)-1 && int(p-ln.lo) >= ln.ends[i] {
		i++
	}
	if ln.p != nil {
		nb.pending = append(nb.pending, fmt.Sprintf("%s: %s: the key maker was handed the name after Lookup returned (the suite had written a fresh pattern over it then): a lookup borrows its names only until it returns, and a call it abandoned uses its own copy",
			ln.p.label, ln.p.name(i)))
		return
	}
	nb.pending = append(nb.pending, fmt.Sprintf("%s: row %d (%s): the key maker was handed the row's name after the operation's access ended (the suite had written a fresh pattern over it when it first saw access Ended): a driver borrows names only until access ends, and copies what it needs longer",
		ln.w.label, i, ln.w.row(i)))
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
