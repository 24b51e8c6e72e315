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

// scratchPool holds scratch between attempts. Scratch that served a huge
// view is not kept (maxPooledRows), so one outlier does not pin memory.
type scratchPool struct{ pool sync.Pool }

// maxPooledRows bounds the views whose scratch returns to the pool.
const maxPooledRows = 1 << 16

// get returns scratch sized for rows rows, nameBytes bytes of names and
// groups groups, every slice of length 0 or the right length.
func (p *scratchPool) get(rows, nameBytes, groups int) *scratch {
	s, _ := p.pool.Get().(*scratch)
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
