package binding

import (
	"context"
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/rowbatch"
)

// ErrNoLookup is Lookup's answer when the driver cannot look names up
// (it does not implement contract.Looker).
var ErrNoLookup = errors.New("kvshare/binding: the driver has no lookup")

// LookupOptions say how much a lookup asks.
type LookupOptions struct {
	// Every asks about every row. By default a group is asked about only
	// up to its first row that is not Present, and a later group only
	// about the rows before the least such prefix of the groups before
	// it: nothing past that bound can change the answer an engine acts
	// on. Rows not asked are Unknown.
	Every bool
}

// LookupResult is a lookup's answer: each row's presence in view order,
// and the bound an engine can rely on — the minimum over the groups of
// each group's Present prefix (contract.View.PresentBound), for the
// one-group-per-layer layout. Present means a fetch made now would read
// the row whole; with Capabilities.PresenceFromIndex (see
// Regions().Capabilities()), that the store's index holds the whole
// object, and a fetch of it may still fault (a Mooncake provider that
// stopped answering, listed until the master notices): the bound is
// what to fetch, and the fetch's outcome what arrived.
type LookupResult struct {
	Rows  []contract.Presence
	Bound int
}

// Count returns how many rows the lookup answered p.
func (r LookupResult) Count(p contract.Presence) int {
	n := 0
	for _, q := range r.Rows {
		if q == p {
			n++
		}
	}
	return n
}

// Lookup asks the driver which of the view's rows the store holds, before
// any memory is lent: only the groups' names are read (slots and regions
// are not looked at). A malformed view is refused with
// [contract.ErrInvalidSubmission] naming the group and row; a driver
// without a lookup with [ErrNoLookup]; a backend shut down or stopped by
// a violation with [contract.ErrSubmissionRejected]. Within a group the
// rows are asked in calls cut at a repeated name (a lookup never carries
// a name twice). What the store has not answered when ctx ends is
// Unknown; the driver's refusal of a call is returned, with the rows
// answered so far. Nothing is allocated per row beyond the answer.
//
// A lookup is in flight from its admission to its answer: Shutdown and
// Close never drain, unregister or close the driver beside one, and wait
// for it (within their own contexts). A lookup in flight when the
// backend shuts down asks nothing more after the group it is asking: its
// later groups are Unknown, and its error wraps ErrSubmissionRejected.
func (b *Backend) Lookup(ctx context.Context, v contract.View, o LookupOptions) (LookupResult, error) {
	looker, ok := b.drv.(contract.Looker)
	if !ok {
		return LookupResult{}, fmt.Errorf("%w (%T)", ErrNoLookup, b.drv)
	}
	b.mu.Lock()
	err := b.rejectedLocked()
	if err == nil {
		b.lookupsIn++ // in flight: Shutdown's retiring goroutine waits for it
	}
	b.mu.Unlock()
	if err != nil {
		return LookupResult{}, err
	}
	if err := validateNames(v); err != nil {
		b.mu.Lock()
		b.lookupLeftLocked()
		b.mu.Unlock()
		return LookupResult{}, err
	}
	res := LookupResult{Rows: make([]contract.Presence, rowsOf(v))}
	asked, present, err := b.ask(ctx, looker, v, o, res.Rows)
	b.mu.Lock()
	b.lookups++
	b.lookupNames += int64(asked)
	b.lookupPresent += int64(present)
	b.lookupLeftLocked()
	b.mu.Unlock()
	res.Bound = v.PresentBound(res.Rows)
	return res, err
}

// lookupLeftLocked counts a lookup out of flight; the last one out after
// Shutdown wakes the retiring goroutine.
func (b *Backend) lookupLeftLocked() {
	b.lookupsIn--
	if b.lookupsIn == 0 && b.closing {
		b.broadcastLocked()
	}
}

// shutDown reports whether Shutdown was called.
func (b *Backend) shutDown() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closing
}

// ask asks the driver group by group, cut at repeated names, writing
// each answer into rows; it returns the names asked and those present.
func (b *Backend) ask(ctx context.Context, looker contract.Looker, v contract.View, o LookupOptions, rows []contract.Presence) (asked, present int, err error) {
	cutter, _ := b.cutters.Get().(*rowbatch.Cutter)
	if cutter == nil {
		cutter = new(rowbatch.Cutter)
	}
	defer b.cutters.Put(cutter)
	limit, base := -1, 0
	for gi, g := range v.Groups {
		if gi > 0 && b.shutDown() {
			return asked, present, fmt.Errorf("%w: the backend was shut down during the lookup; groups %d to %d not asked",
				contract.ErrSubmissionRejected, gi, len(v.Groups)-1)
		}
		n := len(g.Names)
		want := n
		if !o.Every && limit >= 0 {
			want = min(n, limit)
		}
		prefix := 0
		cutter.Reset(g.Names[:want], 1, rowbatch.Caps{})
		for {
			cut, more := cutter.Next()
			if !more {
				break
			}
			dst := rows[base+cut.Start : base+cut.Start : base+cut.End]
			got, err := lookupCall(ctx, looker, contract.LookupBatch{Keys: b.keys, Names: g.Names[cut.Start:cut.End], Distinct: true}, dst)
			asked += cut.End - cut.Start
			if err != nil {
				return asked, present, err
			}
			stop := false
			for i, p := range got {
				rows[base+cut.Start+i] = p // got aliases rows unless the driver made its own
				if p == contract.Present {
					present++
					if prefix == cut.Start+i {
						prefix++
					}
				} else if !o.Every {
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
		base += n
	}
	return asked, present, nil
}

// lookupCall makes one driver call, holding the driver to one answer a
// name and to never panicking.
func lookupCall(ctx context.Context, looker contract.Looker, batch contract.LookupBatch, dst []contract.Presence) (got []contract.Presence, err error) {
	defer func() {
		if p := recover(); p != nil {
			got, err = nil, fmt.Errorf("kvshare/binding: lookup: the driver panicked: %v", p)
		}
	}()
	got, err = looker.Lookup(ctx, batch, dst)
	if err != nil {
		return nil, fmt.Errorf("kvshare/binding: lookup of %d names: %w", len(batch.Names), err)
	}
	if len(got) != len(batch.Names) {
		return nil, fmt.Errorf("kvshare/binding: lookup: the driver answered %d presences for %d names", len(got), len(batch.Names))
	}
	return got, nil
}

// rowsOf counts a lookup view's rows: its names.
func rowsOf(v contract.View) int {
	n := 0
	for _, g := range v.Groups {
		n += len(g.Names)
	}
	return n
}

// validateNames refuses a name a lookup cannot ask about.
func validateNames(v contract.View) error {
	for gi, g := range v.Groups {
		if g.Slots != nil && len(g.Slots) != len(g.Names) {
			return invalid(gi, -1, "%d slots but %d names", len(g.Slots), len(g.Names))
		}
		for ri, name := range g.Names {
			if len(name) == 0 || len(name) > keys.MaxNameBytes {
				return invalid(gi, ri, "name of %d bytes, want 1 to %d", len(name), keys.MaxNameBytes)
			}
		}
	}
	return nil
}
