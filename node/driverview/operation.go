package driverview

import (
	"errors"
	"sync/atomic"

	"github.com/kvshare/kvshare/contract"
)

// operation is one of the view's admitted calls: the shared driver's
// operation, and what the view knows of it. Poll and Cancel pass
// through; the onChange the shared driver calls is changed, which calls
// the caller's.
//
// The view learns an access end from the polls made through it (the
// caller's, from inside its onChange or not, and the view's own when it
// drains or sweeps). An end is announced once an onChange call of the
// operation returns after a poll through the view saw it: the caller has
// then been called back and can have read it. Until then the operation
// stays the view's, and Drain waits for it (see drain.go).
type operation struct {
	v        *View
	onChange func() // the caller's; nil means none
	seen     atomic.Uint32

	// guarded by v.mu
	op        contract.Operation // nil until the shared driver's Put or Get returned it
	running   int                // onChange calls of it running now
	announced bool               // its access end was announced: it left v.ops
	asked     bool               // Drain asked it to Cancel
}

// Poll passes through and notes the access the snapshot shows.
func (o *operation) Poll(dst []contract.RowStatus) contract.OpState {
	st := o.op.Poll(dst)
	o.saw(st.Access)
	return st
}

// Cancel passes through.
func (o *operation) Cancel() { o.op.Cancel() }

// saw notes an access state a poll through the view returned. Open is
// never noted, and neither is a change back from a later state, which
// only a driver that breaks the rules would show.
func (o *operation) saw(a contract.Access) {
	if a == contract.Open || a > contract.Unprovable {
		return
	}
	for {
		old := o.seen.Load()
		switch {
		case contract.Access(old) == a, contract.Access(old) == contract.Ended:
			return
		case o.seen.CompareAndSwap(old, uint32(a)):
			return
		}
	}
}

// seenAccess is the latest access a poll through the view saw.
func (o *operation) seenAccess() contract.Access { return contract.Access(o.seen.Load()) }

// changed is the onChange the shared driver calls. No call reaches the
// caller after a Drain of the view answered true; every other one does,
// counted while it runs, and one that returns after a poll through the
// view saw the access end announces it.
func (o *operation) changed() {
	v := o.v
	v.mu.Lock()
	if v.drainedOK {
		v.mu.Unlock()
		return
	}
	v.callbacks++
	o.running++
	v.mu.Unlock()
	defer o.returned()
	if o.onChange != nil {
		o.onChange()
	}
}

// returned ends an onChange call (also one that panicked).
func (o *operation) returned() {
	v := o.v
	v.mu.Lock()
	v.callbacks--
	o.running--
	if o.seenAccess() == contract.Ended && o.op != nil {
		v.announceLocked(o)
	}
	v.broadcastLocked()
	v.mu.Unlock()
}

// announceLocked records that o's access end was announced: o is no
// longer the view's to wait for.
func (v *View) announceLocked(o *operation) {
	if !o.announced {
		o.announced = true
		delete(v.ops, o)
	}
}

// Put passes the batch to the shared driver's Put. It is refused with an
// error wrapping [contract.ErrDriverRejected] after Drain or Close, while
// the view's Recycle runs, and when a span of the batch lies outside
// every region registered through the view; the shared driver's refusal
// passes through.
func (v *View) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	return v.admit("put", b, onChange, func(notify func()) (contract.Operation, error) {
		return v.shared.Put(b, notify)
	})
}

// Get passes the batch and hint to the shared driver's Get, refused as
// Put is.
func (v *View) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	return v.admit("get", b, onChange, func(notify func()) (contract.Operation, error) {
		return v.shared.Get(b, h, notify)
	})
}

func (v *View) admit(verb string, b contract.RowBatch, onChange func(), call func(func()) (contract.Operation, error)) (contract.Operation, error) {
	v.mu.Lock()
	if err := v.usableLocked(verb); err != nil {
		v.mu.Unlock()
		return nil, err
	}
	index := v.index
	v.admitting++
	v.mu.Unlock()

	if err := index.check(verb, b); err != nil {
		v.mu.Lock()
		v.admitting--
		v.broadcastLocked()
		v.mu.Unlock()
		return nil, err
	}
	o := &operation{v: v, onChange: onChange}
	returned := false
	defer func() {
		if !returned { // the shared driver panicked: an operation may run, unknown to the view
			v.mu.Lock()
			v.admitting--
			v.breakLocked(verb + " panicked in the shared driver")
			v.mu.Unlock()
		}
	}()
	op, err := call(o.changed)
	returned = true

	var sweep []*operation
	v.mu.Lock()
	v.admitting--
	switch {
	case op != nil:
		// Admitted (with an error beside it, the shared driver broke the
		// rules, but the operation may run all the same): the view's.
		o.op = op
		v.lastAt, v.admittedAny = v.ledger.admitted(), true
		v.ops[o] = struct{}{}
		if len(v.ops) >= v.sweepAt {
			sweep = v.sweepLocked()
		}
	case err == nil:
		v.breakLocked(verb + ": the shared driver returned no operation and no error")
	case !errors.Is(err, contract.ErrDriverRejected):
		// An error that does not certify nothing escaped: the call may
		// run, and the view cannot follow it.
		v.breakLocked(verb + ": the shared driver's error does not wrap ErrDriverRejected")
	}
	v.broadcastLocked()
	v.mu.Unlock()
	if sweep != nil {
		v.announceEnded(sweep)
		v.mu.Lock()
		v.sweepAt = max(sweepFloor, 2*v.unendedLocked())
		v.mu.Unlock()
	}
	if op == nil {
		return nil, err
	}
	return o, err
}
