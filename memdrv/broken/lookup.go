package broken

import (
	"context"
	"slices"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// ownPut is a put of this driver as the rules that answer from its own
// puts (PresentForOwnPut, PresentWhileWriting, PresentForDeclined,
// QueuedPutNotInFlight, InFlightAfterPutEnded) remember it: the wrapped driver's
// operation, each row's store key and each row's first span.
type ownPut struct {
	op    contract.Operation
	keys  []string
	spans []contract.Span
}

// Lookup answers as the wrapped driver's Lookup, bent by the lookup
// rules (see each rule's comment): it is memdrv's, exact, for every
// other rule.
func (d *Driver) Lookup(ctx context.Context, b contract.LookupBatch, dst []contract.Presence) ([]contract.Presence, error) {
	d.enter()
	switch d.rule {
	case AdmitsLookupAfterDrain:
		d.mu.Lock()
		drained := d.drainCalled
		d.mu.Unlock()
		if drained {
			return d.shadow.Lookup(ctx, b, dst) // the draining flag never looked at
		}
	case LookupIgnoresDeadline:
		ctx = context.WithoutCancel(ctx)
	case LookupBlocksAdmission:
		d.admission <- struct{}{}
		defer func() { <-d.admission }()
	case LookupAfterFalseDrain, LookupAfterClose:
		if d.answersFromShadow() {
			return d.shadow.Lookup(ctx, b, dst) // the state that refuses never looked at
		}
	case LookupNamesAfterReturn:
		defer d.keepLookup(b)
	}
	got, err := d.inner.Lookup(ctx, b, dst)
	if err != nil || len(got) == 0 {
		return got, err
	}
	switch d.rule {
	case WrongLookupCount:
		got = got[:len(got)-1]
	case LookupRowsReversed:
		slices.Reverse(got)
	case PresentForAbsent:
		for i, p := range got {
			if p == contract.Absent {
				got[i] = contract.Present
			}
		}
	case PresentWhileWriting, PresentForOwnPut, PresentForTorn:
		d.bendPresence(b, got)
	case AbsentWhenLookupFails:
		unanswered(ctx, got)
	case PresentForDeclined, QueuedPutNotInFlight, InFlightAfterPutEnded:
		d.bendOwnPuts(b, got)
	}
	return got, nil
}

// bendPresence answers Present where PresentWhileWriting,
// PresentForOwnPut or PresentForTorn lie, building each name's key now
// (the names are borrowed until Lookup returns).
func (d *Driver) bendPresence(b contract.LookupBatch, got []contract.Presence) {
	own := d.ownWriting()
	d.mu.Lock()
	torn := d.torn
	var key []byte
	for i := range got {
		key = b.AppendKey(key[:0], i)
		mine := own[string(key)]
		switch {
		case d.rule == PresentForOwnPut && mine,
			d.rule == PresentWhileWriting && got[i] == contract.InFlight && !mine,
			d.rule == PresentForTorn && torn[string(key)]:
			got[i] = contract.Present
		}
	}
	d.mu.Unlock()
}

// keepPut remembers an admitted put and its rows' keys
// (PresentForOwnPut, PresentWhileWriting).
func (d *Driver) keepPut(op contract.Operation, b contract.RowBatch) {
	keys := make([]string, b.Len())
	spans := make([]contract.Span, b.Len())
	for i, r := range b.Rows {
		keys[i] = b.Key(i)
		if len(r.Spans) > 0 {
			spans[i] = r.Spans[0]
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.puts = append(d.puts, ownPut{op: op, keys: keys, spans: spans})
}

// ownWriting returns the keys of the rows of this driver's puts that are
// not final yet, queued or running, and forgets the puts whose access
// ended, once it recorded how their rows ended.
func (d *Driver) ownWriting() map[string]bool {
	d.mu.Lock()
	puts := slices.Clone(d.puts)
	d.mu.Unlock()
	own := map[string]bool{}
	var ended []contract.Operation
	for _, p := range puts {
		st := p.op.Poll(nil)
		if st.Access == contract.Ended {
			ended = append(ended, p.op)
			d.mu.Lock()
			d.noteEndedLocked(p, st.Rows)
			d.mu.Unlock()
		}
		for i, r := range st.Rows {
			if !r.Final() && i < len(p.keys) {
				own[p.keys[i]] = true
			}
		}
	}
	if len(ended) > 0 {
		d.mu.Lock()
		d.puts = slices.DeleteFunc(d.puts, func(p ownPut) bool { return slices.Contains(ended, p.op) })
		d.mu.Unlock()
	}
	return own
}

// noteTorn records the key of a put row whose store call ended Fault
// (PresentForTorn), and keeps memdrv's verdict.
func (d *Driver) noteTorn(e memdrv.RowEnd) contract.RowStatus {
	if e.Dir == memdrv.PutDir && e.Status == contract.Fault {
		d.mu.Lock()
		d.torn[e.Key] = true
		d.mu.Unlock()
	}
	return e.Status
}

// admit waits, under LookupBlocksAdmission, until no lookup is inside
// the store.
func (d *Driver) admit() {
	if d.rule == LookupBlocksAdmission {
		d.admission <- struct{}{}
		<-d.admission
	}
}

var _ contract.Looker = (*Driver)(nil)
