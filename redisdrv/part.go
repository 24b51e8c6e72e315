package redisdrv

import (
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
)

// part is the store's view of one store call of the kit: one
// pipeline's worth of an operation (at most RowsPerCall rows and
// BytesPerCall bytes, a larger row alone), its verdicts being worked
// out.
type part struct {
	c      *drivekit.Call
	dir    contract.Direction
	keys   []string
	status []contract.RowStatus // by row of the call
	// split: the rows lie on several cluster nodes, and each node's are
	// settled as soon as its pipeline returned (see record).
	split bool
}

// len returns the number of rows of the part.
func (p *part) len() int { return len(p.keys) }

// span is row j's span.
func (p *part) span(j int) contract.Span { return p.c.Rows[j].Spans[0] }
