package node

import (
	"context"
	"fmt"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/rowbatch"
)

// lookups are an engine's lookups: asked through a view of the shared
// driver of its own (so the session's end drains only its own), with
// the node's key stem, so a name looked up makes the key a publish of
// it wrote. An engine that lends nothing can look up.
type lookups struct {
	view   contract.Driver
	looker contract.Looker // nil: the driver cannot look names up
	keys   keys.Stem
}

func (n *Node) newLookups(stem keys.Stem) *lookups {
	v := n.newView()
	looker, _ := v.(contract.Looker)
	return &lookups{view: v, looker: looker, keys: stem}
}

// lookup takes a lookup: checked, then asked on a goroutine of its own
// (the store may take its time), answered with presence or refused.
func (e *engine) lookup(request uint64, m *nodewire.Lookup) {
	rows := 0
	for _, g := range m.Groups {
		rows += len(g)
	}
	var r *refusal
	e.mu.Lock()
	switch {
	case e.ending:
		r = refuse(nodewire.CodeShuttingDown, "lookup", "the session is ending")
	case e.finder.looker == nil:
		r = refuse(nodewire.CodeStore, "lookup", "the node's store driver cannot look names up")
	case len(e.transfers)+e.lookupsIn >= e.n.cfg.MaxAttempts:
		r = refuse(nodewire.CodeLimitExceeded, "attempts", "%d attempts and lookups in flight, the node's limit", len(e.transfers)+e.lookupsIn)
	case rows > e.n.cfg.MaxRows:
		r = refuse(nodewire.CodeLimitExceeded, "lookup.rows", "%d names, over the node's limit of %d", rows, e.n.cfg.MaxRows)
	}
	if r == nil {
		r = checkLookupNames(m.Groups)
	}
	if r == nil {
		r = e.n.reclaimRefusal("lookup")
	}
	if r == nil {
		e.lookupsIn++
		e.work.Add(1)
	}
	e.mu.Unlock()
	if r != nil {
		e.refuse(request, r)
		return
	}
	go func() {
		defer e.work.Done()
		res, asked, present, err := e.finder.ask(e.ctx, m, rows)
		e.mu.Lock()
		e.lookupsIn--
		e.mu.Unlock()
		e.count(func(c *Counts) { c.Lookups++; c.LookupNames += int64(asked); c.LookupPresent += int64(present) })
		if err != nil && e.ctx.Err() == nil {
			e.refuse(request, refuse(nodewire.CodeStore, "lookup", "%v", err))
			return
		}
		e.tellAbsent(m.Groups, res.Rows) // first, as for an outcome
		e.post(request, res)
	}()
}

// checkLookupNames refuses a name no key can be made of.
func checkLookupNames(groups [][][]byte) *refusal {
	for gi, g := range groups {
		for ri, name := range g {
			if n := len(name); n == 0 || n > keys.MaxNameBytes {
				return refuse(nodewire.CodeBadNames, fmt.Sprintf("lookup.groups[%d].names[%d]", gi, ri), "a name of %d bytes, want 1 to %d", n, keys.MaxNameBytes)
			}
		}
	}
	return nil
}

// ask asks the store group by group, in calls cut at a repeated name (a
// lookup never carries a name twice). Without Every a group is asked
// only up to its first row that is not Present, and a later group only
// up to the least such prefix before it: nothing past that bound
// changes what the engine acts on. Rows not asked are Unknown.
func (f *lookups) ask(ctx context.Context, m *nodewire.Lookup, rows int) (res *nodewire.Presence, asked, present int, err error) {
	res = &nodewire.Presence{Rows: make([]contract.Presence, rows)}
	var cutter rowbatch.Cutter
	limit, base := -1, 0
	bound := -1
	for _, names := range m.Groups {
		n := len(names)
		want := n
		if !m.Every && limit >= 0 {
			want = min(n, limit)
		}
		prefix := 0
		cutter.Reset(names[:want], 1, rowbatch.Caps{})
		for {
			cut, more := cutter.Next()
			if !more {
				break
			}
			dst := res.Rows[base+cut.Start : base+cut.Start : base+cut.End]
			got, err := f.looker.Lookup(ctx, contract.LookupBatch{Keys: f.keys, Names: names[cut.Start:cut.End], Distinct: true}, dst)
			asked += cut.End - cut.Start
			if err != nil {
				return res, asked, present, fmt.Errorf("lookup of %d names: %w", cut.End-cut.Start, err)
			}
			if len(got) != cut.End-cut.Start {
				return res, asked, present, fmt.Errorf("the driver answered %d presences for %d names", len(got), cut.End-cut.Start)
			}
			stop := false
			for i, p := range got {
				res.Rows[base+cut.Start+i] = p // got aliases res.Rows unless the driver made its own
				if p == contract.Present {
					present++
					if prefix == cut.Start+i {
						prefix++
					}
				} else if !m.Every {
					stop = true
				}
			}
			if stop {
				break
			}
		}
		if limit < 0 || prefix < limit {
			limit = prefix
		}
		if bound < 0 || prefix < bound {
			bound = prefix
		}
		base += n
	}
	res.Bound = uint32(max(bound, 0))
	return res, asked, present, nil
}

// close drains the engine's lookup view within ctx and closes it (the
// shared driver stays open). A lookup abandoned inside the store lends
// no memory: a view that does not drain is left to the store.
func (f *lookups) close(ctx context.Context) error {
	if !f.view.Drain(ctx) {
		return fmt.Errorf("the lookup view did not drain: a lookup is still inside the store")
	}
	return f.view.Close()
}
