package nodeclient

import (
	"context"
	"fmt"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodewire"
)

// LookupOptions say how much a lookup asks, as binding's do.
type LookupOptions struct {
	// Every asks about every row. By default the node may stop asking a
	// group at its first row that is not Present, and a later group past
	// the least such prefix of the groups before it; rows not asked are
	// Unknown.
	Every bool
}

// LookupResult is a lookup's answer: each row's presence in view order,
// and the bound an engine can rely on, the minimum over the groups of
// each group's Present prefix (contract.View.PresentBound).
type LookupResult struct {
	Rows  []contract.Presence
	Bound int
}

// Lookup asks the node which of the view's rows its store holds, lending
// nothing: only the groups' names are read, so an engine that never
// lends can look up (a scheduler, a router). A name that is empty, or
// more rows or bytes than the node takes, is refused before anything is
// sent, with an error wrapping contract.ErrInvalidSubmission and
// nodewire.ErrBadNames or nodewire.ErrLimit; the node's refusal is a
// *nodewire.RefusedError. It waits within ctx; if ctx ends first, the
// answer is dropped when it comes.
func (c *Client) Lookup(ctx context.Context, v contract.View, o LookupOptions) (LookupResult, error) {
	m := &nodewire.Lookup{Every: o.Every, Groups: make([][][]byte, len(v.Groups))}
	names := contract.View{Groups: make([]contract.Group, len(v.Groups))} // the view as asked: names alone
	rows := 0
	for gi, g := range v.Groups {
		for ri, n := range g.Names {
			if len(n) == 0 {
				return LookupResult{}, fmt.Errorf("%w: %w: lookup: group %d row %d: an empty name", contract.ErrInvalidSubmission, nodewire.ErrBadNames, gi, ri)
			}
		}
		rows += len(g.Names)
		m.Groups[gi] = g.Names
		names.Groups[gi].Names = g.Names
	}
	if err := c.checkRows(rows, "lookup"); err != nil {
		return LookupResult{}, fmt.Errorf("%w: %w", contract.ErrInvalidSubmission, err)
	}
	e := encode(m)
	if err := c.checkBody(e, "lookup"); err != nil {
		return LookupResult{}, fmt.Errorf("%w: %w", contract.ErrInvalidSubmission, err)
	}
	r, err := c.call(ctx, e, -1, nil, nodewire.TypePresence)
	if err != nil {
		return LookupResult{}, fmt.Errorf("kvshare/nodeclient: lookup: %w", err)
	}
	p := r.(*nodewire.Presence)
	if len(p.Rows) != rows || int(p.Bound) != names.PresentBound(p.Rows) {
		err := fmt.Errorf("%w: %w: a presence of %d rows and bound %d answers a lookup of %d rows (whose bound is %d)",
			ErrClosed, nodewire.ErrProtocol, len(p.Rows), p.Bound, rows, names.PresentBound(p.Rows))
		c.shut(err)
		return LookupResult{}, err
	}
	return LookupResult{Rows: p.Rows, Bound: int(p.Bound)}, nil
}

// Stats asks the node for its counters, over every engine, and waits
// within ctx for them.
func (c *Client) Stats(ctx context.Context) (nodewire.StatsReply, error) {
	r, err := c.call(ctx, &nodewire.Stats{}, -1, nil, nodewire.TypeStatsReply)
	if err != nil {
		return nodewire.StatsReply{}, fmt.Errorf("kvshare/nodeclient: stats: %w", err)
	}
	return *r.(*nodewire.StatsReply), nil
}
