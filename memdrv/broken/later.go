package broken

import (
	"context"
	"slices"
	"time"

	"github.com/kvshare/kvshare/contract"
)

// firstRow is the first row of an operation, as UnregisterFirstRowOnly
// remembers it: the only row it asks about when deciding whether a
// region is busy.
type firstRow struct {
	op    contract.Operation // the wrapped driver's
	spans []contract.Span
}

// keepFirstRow remembers the first row of an admitted operation
// (UnregisterFirstRowOnly).
func (d *Driver) keepFirstRow(op contract.Operation, b contract.RowBatch) {
	if len(b.Rows) == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.firsts = append(d.firsts, firstRow{op: op, spans: slices.Clone(b.Rows[0].Spans)})
}

// firstRowIn reports whether the first row of an operation whose access
// has not ended lies in the region of reg (UnregisterFirstRowOnly).
func (d *Driver) firstRowIn(reg contract.Registration) bool {
	d.mu.Lock()
	r, ok := d.regions[reg]
	firsts := slices.Clone(d.firsts)
	d.mu.Unlock()
	if !ok {
		return false
	}
	lo, hi := r.Base, r.Base+uintptr(r.Len)
	for _, f := range firsts {
		if f.op.Poll(nil).Access == contract.Ended {
			continue
		}
		for _, s := range f.spans {
			if s.Addr < hi && s.End() > lo {
				return true
			}
		}
	}
	return false
}

// idlePoll is how often AdmitsAfterDrainDeadline's Drain looks whether
// the rows running in the store ended.
const idlePoll = 100 * time.Microsecond

// idleWithin waits, within ctx, until no row runs in the store and no
// callback is being delivered, and reports whether that came before ctx
// ended (AdmitsAfterDrainDeadline).
func (d *Driver) idleWithin(ctx context.Context) bool {
	t := time.NewTicker(idlePoll)
	defer t.Stop()
	for d.inner.Busy() > 0 {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	return true
}

// logFinished logs, once each, the operations whose access ended since
// the last call, building each row's key now from the batch's names
// (NamesAfterEnd): names its caller lent only until access ended.
func (d *Driver) logFinished() {
	d.mu.Lock()
	ops := slices.Clone(d.ops)
	d.mu.Unlock()
	for _, o := range ops {
		o.mu.Lock()
		due := !o.logged && o.inner.Poll(nil).Access == contract.Ended
		o.logged = o.logged || due
		o.mu.Unlock()
		if !due || o.batch.Keys == nil {
			continue
		}
		for i, r := range o.batch.Rows {
			key := o.batch.Keys.AppendKey(nil, r.Name)
			d.log.Debug("broken: row finished", "row", i, "key", string(key))
		}
	}
}
