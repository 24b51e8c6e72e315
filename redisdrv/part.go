package redisdrv

import (
	"github.com/kvshare/kvshare/contract"
)

// part is one pipeline's worth of an operation: rows [lo, hi) of its
// batch, at most RowsPerCall rows and BytesPerCall bytes (a single
// larger row goes alone). Its keys are built at admission.
type part struct {
	op     *operation
	lo, hi int
	bytes  int64
	keys   []string
	hashes []uint64             // put: each row's key hash in Driver.writing
	marked []bool               // put: the row marked its key in Driver.writing, and unmarks it when it ends
	status []contract.RowStatus // the verdicts being worked out, by part row
	// recorded, for a part whose rows lie on several cluster nodes, marks
	// the rows whose verdicts were recorded when their node's pipeline
	// returned, before the part's others (nil: all are recorded at the
	// part's end). Guarded by the driver's lock.
	recorded []bool
}

// len returns the number of rows of the part.
func (p *part) len() int { return p.hi - p.lo }

// span is part row j's span.
func (p *part) span(j int) contract.Span { return p.op.batch.Rows[p.lo+j].Spans[0] }
