package node

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/nodewire"
)

// transfer is a publish or fetch in flight: accepted, not yet quiesced.
type transfer struct {
	request   uint64
	l         *lend
	att       contract.Attempt
	disturbed atomic.Bool // a reclaim's recycle began before its outcome was known
	dir       contract.Direction
	groups    []nodewire.Group // the engine's, for Config.Events

	// Guarded by e.mu.
	use     usage // what it holds of its tenant's limits
	settled bool  // use given back
}

// settleLocked gives t's usage back to its tenant, once: when t
// quiesced, or when its lend was let go. Under e.mu.
func (e *engine) settleLocked(t *transfer) {
	if !t.settled {
		t.settled = true
		e.n.tenants.give(e.tenant, t.use)
	}
}

// transfer takes a publish or fetch: checked against the lend and the
// limits, then submitted to the lend's backend with its deadline. It
// answers accepted (then, from a watcher, outcome and quiesced) or
// refused.
func (e *engine) transfer(request uint64, m *nodewire.Transfer) {
	op := "publish"
	if m.Dir == contract.GetDir {
		op = "fetch"
	}
	received := time.Now()
	e.mu.Lock()
	recycles := e.n.recycles.Load() // before the gate: see reclaim_gate.go
	l, r := e.admitTransfer(request, op, m)
	var use usage
	if r == nil { // last: a refusal touched nothing
		use = usage{bytes: int64(rowsOf(m.Groups)) * l.m.g.slotBytes, attempts: 1}
		r = e.n.tenants.take(e.tenant, use)
	}
	if r == nil {
		l.inFlight++
		e.transfers[request] = nil // reserved: the id is in use
	}
	e.mu.Unlock()
	if r != nil {
		e.refuse(request, r)
		return
	}
	v := contract.View{Groups: make([]contract.Group, len(m.Groups))}
	for i, g := range m.Groups {
		slots := make([]int32, len(g.Slots))
		for j, s := range g.Slots {
			slots[j] = int32(s) // checked below the slot count, itself at most MaxInt32
		}
		v.Groups[i] = contract.Group{Region: int(g.Region), Slots: slots, Names: g.Names}
	}
	var deadline time.Time
	if m.Deadline > 0 {
		deadline = received.Add(m.Deadline)
	}
	var att contract.Attempt
	var err error
	if m.Dir == contract.GetDir {
		att, err = l.be.FetchBy(v, nil, deadline)
	} else {
		att, err = l.be.PublishBy(v, nil, deadline)
	}
	if err != nil {
		e.mu.Lock()
		l.inFlight--
		delete(e.transfers, request)
		e.mu.Unlock()
		e.n.tenants.give(e.tenant, use)
		e.refuse(request, submissionRefusal(op, err))
		return
	}
	t := &transfer{request: request, l: l, att: att, use: use, dir: m.Dir, groups: m.Groups}
	e.mu.Lock()
	if e.n.recycles.Load() != recycles {
		t.disturbed.Store(true) // a reclaim began while it was on its way in
	}
	e.transfers[request] = t
	e.work.Add(1)
	e.mu.Unlock()
	e.count(func(c *Counts) { c.Attempts++ })
	e.post(request, &nodewire.Accepted{})
	go e.watch(t)
}

// admitTransfer checks a transfer before anything is submitted; it
// returns the lend, or the refusal naming the field at fault.
func (e *engine) admitTransfer(request uint64, op string, m *nodewire.Transfer) (*lend, *refusal) {
	l := e.lends[m.Lend]
	switch {
	case e.ending:
		return nil, refuse(nodewire.CodeShuttingDown, op, "the session is ending")
	case l == nil:
		return nil, refuse(nodewire.CodeUnknownLend, op+".lend", "no lend %d", m.Lend)
	case l.returning:
		return nil, refuse(nodewire.CodeBusy, op+".lend", "lend %d is being returned", m.Lend)
	case len(e.transfers)+e.lookupsIn >= e.n.cfg.MaxAttempts:
		return nil, refuse(nodewire.CodeLimitExceeded, "attempts", "%d attempts and lookups in flight, the node's limit", len(e.transfers)+e.lookupsIn)
	}
	if r := e.n.reclaimRefusal(op); r != nil {
		return nil, r
	}
	if _, used := e.transfers[request]; used {
		return nil, refuse(nodewire.CodeProtocol, "header.request", "request id %d names an attempt in flight", request)
	}
	if rows := rowsOf(m.Groups); rows > e.n.cfg.MaxRows {
		return nil, refuse(nodewire.CodeLimitExceeded, op+".rows", "%d rows, over the node's limit of %d", rows, e.n.cfg.MaxRows)
	}
	g := l.m.g
	for gi, grp := range m.Groups {
		field := fmt.Sprintf("%s.groups[%d]", op, gi)
		if uint64(grp.Region) >= uint64(g.regions) {
			return nil, refuse(nodewire.CodeOutOfRange, field+".region", "region %d of a lend of %d", grp.Region, g.regions)
		}
		if len(grp.Names) != len(grp.Slots) {
			return nil, refuse(nodewire.CodeBadNames, field+".names", "%d names for %d slots", len(grp.Names), len(grp.Slots))
		}
		for ri, s := range grp.Slots {
			if uint64(s) >= uint64(g.slotCount) {
				return nil, refuse(nodewire.CodeOutOfRange, fmt.Sprintf("%s.slots[%d]", field, ri), "slot %d of a region of %d", s, g.slotCount)
			}
			if n := len(grp.Names[ri]); n == 0 || n > keys.MaxNameBytes {
				return nil, refuse(nodewire.CodeBadNames, fmt.Sprintf("%s.names[%d]", field, ri), "a name of %d bytes, want 1 to %d", n, keys.MaxNameBytes)
			}
		}
	}
	return l, nil
}

// submissionRefusal names what the backend refused: a view it found
// wrong (a fetch naming one slot twice) or a backend that takes no
// work (its driver broke the protocol).
func submissionRefusal(op string, err error) *refusal {
	var se *binding.SubmissionError
	if errors.As(err, &se) {
		field := op
		switch {
		case se.Group >= 0 && se.Row >= 0:
			field = fmt.Sprintf("%s.groups[%d].slots[%d]", op, se.Group, se.Row)
		case se.Group >= 0:
			field = fmt.Sprintf("%s.groups[%d]", op, se.Group)
		}
		return refuse(nodewire.CodeOutOfRange, field, "%s", se.Reason)
	}
	return refuse(nodewire.CodeStore, op, "%v", err)
}

// watch tells the engine an attempt's outcome once it is known, and
// that it quiesced once it has. An attempt that never quiesces (access
// unprovable) is never said quiesced: its memory stays lent. The
// watcher leaves when the session ends.
func (e *engine) watch(t *transfer) {
	defer e.work.Done()
	select {
	case <-t.att.Known():
	case <-e.ctx.Done():
	}
	out, known := t.att.Outcome()
	if !known {
		return
	}
	e.count(statusCounts(out.Rows))
	if t.disturbed.Load() {
		e.count(disturbedCounts(out.Rows))
	}
	e.tellOutcome(t, out) // first: an engine that has the outcome knows the events were told
	e.post(t.request, outcomeFrame(out))
	select {
	case <-t.att.Done():
	case <-e.ctx.Done():
		if !t.att.Quiesced() {
			return
		}
	}
	e.mu.Lock()
	delete(e.transfers, t.request)
	t.l.inFlight--
	e.settleLocked(t)
	e.mu.Unlock()
	e.post(t.request, &nodewire.Quiesced{})
}

// outcomeFrame is the outcome as the engine gets it: each row's status
// and the fault, with its code (Deadline for an outcome forced at the
// attempt's deadline, Store for any other).
func outcomeFrame(out contract.Outcome) *nodewire.Outcome {
	o := &nodewire.Outcome{Rows: out.Rows}
	if out.Fault != nil {
		o.FaultCode = nodewire.CodeStore
		if errors.Is(out.Fault, binding.ErrDeadline) {
			o.FaultCode = nodewire.CodeDeadline
		}
		o.Fault = out.Fault.Error()
	}
	return o
}

// cancelAttempt asks an attempt in flight to stop; an id that names
// none (it quiesced already, say) is ignored: a cancel has no reply.
func (e *engine) cancelAttempt(id uint64) {
	e.mu.Lock()
	t := e.transfers[id]
	e.mu.Unlock()
	if t != nil {
		t.att.Cancel()
	}
}
