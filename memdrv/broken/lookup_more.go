package broken

import (
	"context"

	"github.com/kvshare/kvshare/contract"
)

// The further lookup rules: PresentForDeclined, AbsentWhenLookupFails,
// LookupAfterFalseDrain, LookupAfterClose, LookupNamesAfterReturn,
// QueuedPutNotInFlight and InFlightAfterPutEnded. Each bends memdrv's
// exact answer only where its trigger is.

// lookupState is what the further lookup rules remember, guarded by the
// driver's lock.
type lookupState struct {
	drainedTrue bool                          // LookupAfterFalseDrain: a Drain returned true
	closed      bool                          // LookupAfterClose: Close returned nil
	kept        []contract.LookupBatch        // LookupNamesAfterReturn: the lookups answered since the last call
	ended       map[string]contract.RowStatus // PresentForDeclined, InFlightAfterPutEnded: the final status of each key's last put
}

// answersFromShadow reports whether the rule answers this lookup from
// the never-drained second driver over the same store: after a Drain
// while none answered true (LookupAfterFalseDrain), after Close
// (LookupAfterClose).
func (d *Driver) answersFromShadow() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch d.rule {
	case LookupAfterFalseDrain:
		return d.drainCalled && !d.looks.drainedTrue
	case LookupAfterClose:
		return d.looks.closed
	}
	return false
}

// noteLookupClosed records, under LookupAfterClose, that Close returned nil.
func (d *Driver) noteLookupClosed() {
	if d.rule != LookupAfterClose {
		return
	}
	d.mu.Lock()
	d.looks.closed = true
	d.mu.Unlock()
}

// keepLookup remembers a lookup's batch, its names as the caller lent
// them (LookupNamesAfterReturn).
func (d *Driver) keepLookup(b contract.LookupBatch) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.looks.kept = append(d.looks.kept, b)
}

// logLookups logs, at the start of a call, the lookups answered since
// the last one, building each name's key now from the batch's names
// (LookupNamesAfterReturn): names its caller lent only until Lookup
// returned.
func (d *Driver) logLookups() {
	d.mu.Lock()
	kept := d.looks.kept
	d.looks.kept = nil
	d.mu.Unlock()
	var key []byte
	for _, b := range kept {
		if b.Keys == nil {
			continue
		}
		for i := range b.Names {
			key = b.AppendKey(key[:0], i)
			d.log.Debug("broken: lookup answered", "name", i, "key", string(key))
		}
	}
}

// unanswered bends, under AbsentWhenLookupFails, every name memdrv
// answered Unknown while ctx was alive (the store failed to answer for
// it) to Absent.
func unanswered(ctx context.Context, got []contract.Presence) {
	if ctx.Err() != nil {
		return
	}
	for i, p := range got {
		if p == contract.Unknown {
			got[i] = contract.Absent
		}
	}
}

// bendOwnPuts answers, under PresentForDeclined, QueuedPutNotInFlight
// and InFlightAfterPutEnded, from what this driver's puts did, building
// each name's key now (the names are borrowed until Lookup returns).
func (d *Driver) bendOwnPuts(b contract.LookupBatch, got []contract.Presence) {
	own := d.ownWriting() // records how each put that ended did, and forgets it
	var queued map[string]bool
	if d.rule == QueuedPutNotInFlight {
		queued = d.queued(own)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var key []byte
	for i := range got {
		key = b.AppendKey(key[:0], i)
		ended, done := d.looks.ended[string(key)]
		switch {
		case d.rule == PresentForDeclined && done && ended == contract.Declined:
			got[i] = contract.Present
		case d.rule == InFlightAfterPutEnded && done && ended != contract.Ready && got[i] != contract.Present:
			got[i] = contract.InFlight
		case d.rule == QueuedPutNotInFlight && queued[string(key)] && got[i] == contract.InFlight:
			got[i] = contract.Absent
		}
	}
}

// queued returns, of the keys own holds (those this driver's puts are
// writing), the keys of rows no worker took yet: no row of the region
// the row's span lies in runs (QueuedPutNotInFlight).
func (d *Driver) queued(own map[string]bool) map[string]bool {
	d.mu.Lock()
	puts := append([]ownPut(nil), d.puts...)
	regions := make([]contract.SlotRegion, 0, len(d.regions))
	for _, r := range d.regions {
		regions = append(regions, r)
	}
	d.mu.Unlock()
	out := map[string]bool{}
	for _, p := range puts {
		for i, key := range p.keys {
			if !own[key] || i >= len(p.spans) {
				continue
			}
			for _, r := range regions {
				if within(p.spans[i], r) && d.inner.RowsIn(r).Running == 0 {
					out[key] = true
				}
			}
		}
	}
	return out
}

// within reports whether s starts inside r.
func within(s contract.Span, r contract.SlotRegion) bool {
	return s.Addr >= r.Base && s.Addr < r.Base+uintptr(r.Len)
}

// noteEndedLocked records the final statuses of a put's rows (PresentForDeclined,
// InFlightAfterPutEnded). The caller holds d.mu.
func (d *Driver) noteEndedLocked(p ownPut, rows []contract.RowStatus) {
	if d.looks.ended == nil {
		d.looks.ended = map[string]contract.RowStatus{}
	}
	for i, r := range rows {
		if r.Final() && i < len(p.keys) {
			d.looks.ended[p.keys[i]] = r
		}
	}
}
