package binding

import (
	"sync"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/rowbatch"
)

// scratch is an attempt's working memory, taken from the backend's pool
// when the attempt is submitted and given back once it has quiesced and
// its handover has finished: from then on no driver may touch a name, a
// row or a status buffer of it. An attempt that never quiesces (a call
// held as unprovable) keeps its scratch for good, since the driver may
// still read its names.
//
// Every slice is indexed by the row's place in the view, so a call's
// rows, statuses and names are sub-slices, and nothing is allocated per
// row once the pooled slices have grown to the view's size.
type scratch struct {
	names  []byte               // the view's names, copied call by call
	rows   []contract.Row       // the rows handed to the driver
	spans  []contract.Span      // one span per row, each row's Spans
	polls  []contract.RowStatus // what the latest Poll of each call said
	final  []contract.RowStatus // each row's first final status seen
	calls  []*call              // the calls handed over, in order
	groups []int                // view row of each group's first row
	cutter rowbatch.Cutter
}

// scratchPool holds scratch between attempts. Scratch of views up to
// keptRows rows waits in a short list of its own (at most keptScratch,
// some 7 MB at most), so the next attempt finds it whichever goroutine
// gave it back: a [sync.Pool] keeps an item on the processor that put
// it, where a submitter on another seldom finds it, and each miss
// allocates the view's every buffer again. Larger scratch goes to a
// sync.Pool, which a collection empties; scratch that served a huge
// view is not kept at all (maxPooledRows), so one outlier does not pin
// memory.
type scratchPool struct {
	mu   sync.Mutex
	kept []*scratch
	pool sync.Pool
}

const (
	// maxPooledRows bounds the views whose scratch is kept at all.
	maxPooledRows = 1 << 16
	// keptRows bounds the views whose scratch waits in the list, and
	// keptScratch the list.
	keptRows    = 1 << 13
	keptScratch = 8
)

// get returns scratch sized for rows rows, nameBytes bytes of names and
// groups groups, every slice of length 0 or the right length.
func (p *scratchPool) get(rows, nameBytes, groups int) *scratch {
	var s *scratch
	if rows <= keptRows {
		p.mu.Lock()
		if n := len(p.kept); n > 0 {
			s = p.kept[n-1]
			p.kept[n-1] = nil
			p.kept = p.kept[:n-1]
		}
		p.mu.Unlock()
	}
	if s == nil {
		s, _ = p.pool.Get().(*scratch)
	}
	if s == nil {
		s = new(scratch)
	}
	s.names = grow(s.names, nameBytes)[:0]
	s.rows = grow(s.rows, rows)
	s.spans = grow(s.spans, rows)
	s.polls = grow(s.polls, rows)
	s.final = grow(s.final, rows)
	clear(s.final)
	s.calls = s.calls[:0]
	s.groups = grow(s.groups, groups)
	return s
}

// put gives s back: it drops what points into the driver's or the
// caller's world (operations, calls) and keeps the buffers.
func (p *scratchPool) put(s *scratch) {
	if len(s.rows) > maxPooledRows {
		return
	}
	clear(s.calls) // the rows point only into s itself; calls reach out
	s.calls = s.calls[:0]
	if cap(s.rows) <= keptRows {
		p.mu.Lock()
		if len(p.kept) < keptScratch {
			p.kept = append(p.kept, s)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
	p.pool.Put(s)
}

// grow returns s with length n, reusing its array when it is large
// enough. Contents are left as they were.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
