package driverview

import (
	"context"
	"fmt"
	"math"

	"github.com/kvshare/kvshare/contract"
)

// Drain stops the view taking work (its later Put, Get, Lookup and
// registrations are refused, whatever Drain answers), asks each of its
// operations to Cancel (rows no worker took end Cancelled, when the
// shared driver declares Cancel), and waits within ctx until every one
// of its operations has ended with the end announced by an onChange call
// that returned, no onChange call of them runs, and none of its lookups
// is inside the store. It answers true only then; false when ctx ends
// first, or at once when all that is left is Unprovable. No onChange call
// reaches the caller after a Drain that answered true.
//
// It never calls the shared driver's Drain, and never waits for or
// cancels another view's work. Calling it again answers anew. Once the
// shared driver broke the rules in a way that may leave work the view
// cannot follow (a panic inside a call, an error from Put or Get that
// does not wrap ErrDriverRejected, a registration with neither a handle
// nor an error), Drain answers false for good and Close is refused.
func (v *View) Drain(ctx context.Context) bool {
	v.mu.Lock()
	v.drained = true
	for {
		if v.broken != "" {
			v.mu.Unlock()
			return false
		}
		if v.admitting == 0 && v.callbacks == 0 && v.lookups == 0 && len(v.ops) == 0 {
			v.drainedOK = true
			v.mu.Unlock()
			return true
		}
		var ask, look []*operation
		for o := range v.ops {
			if !o.asked {
				o.asked = true
				ask = append(ask, o)
			}
			if o.running == 0 {
				look = append(look, o)
			}
		}
		changed := v.changedLocked()
		v.mu.Unlock()

		for _, o := range ask {
			o.op.Cancel()
		}
		v.announceEnded(look)
		if v.stuck() {
			return false
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
		v.mu.Lock()
	}
}

// stuck reports whether what keeps the view from draining can never
// change by itself: every operation left was last seen Unprovable, and
// nothing else runs.
func (v *View) stuck() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.admitting > 0 || v.callbacks > 0 || len(v.ops) == 0 {
		return false
	}
	for o := range v.ops {
		if o.seenAccess() != contract.Unprovable {
			return false
		}
	}
	return true
}

// sweepFloor is the number of operations the view holds before an
// admission sweeps out those whose end was never announced (a caller
// that does not poll from inside onChange).
const sweepFloor = 256

// sweepLocked returns the operations to look at in a sweep. Once they
// are looked at, the next sweep comes when the view holds twice what it
// saw not ended (and at least sweepFloor): each admission pays for a
// sweep only as often as the operations in flight doubled.
func (v *View) sweepLocked() []*operation {
	var look []*operation
	for o := range v.ops {
		if o.running == 0 {
			look = append(look, o)
		}
	}
	v.sweepAt = math.MaxInt // no second sweep while this one runs
	return look
}

// unendedLocked counts the operations held not seen Ended.
func (v *View) unendedLocked() int {
	n := 0
	for o := range v.ops {
		if o.seenAccess() != contract.Ended {
			n++
		}
	}
	return n
}

// announceEnded polls each operation itself, and for each one whose
// access it then sees Ended, with no onChange call of it running, calls
// the caller's onChange once more, on a goroutine of the view's, counted
// as a callback from this moment: its return announces the end. An
// extra onChange call is harmless (it says "look again"); an end never
// announced would keep Drain waiting.
func (v *View) announceEnded(look []*operation) {
	if len(look) == 0 {
		return
	}
	for _, o := range look {
		v.pollOwn(o)
	}
	var call []*operation
	v.mu.Lock()
	for _, o := range look {
		if o.seenAccess() == contract.Ended && !o.announced && o.running == 0 && !v.drainedOK {
			v.callbacks++
			o.running++
			call = append(call, o)
		}
	}
	v.mu.Unlock()
	if len(call) > 0 {
		go callBack(call)
	}
}

// pollOwn polls o for the view itself and notes its access. A Poll that
// panics breaks the view (its operations' ends can never be known).
func (v *View) pollOwn(o *operation) {
	defer func() {
		if p := recover(); p != nil {
			v.mu.Lock()
			v.breakLocked(fmt.Sprintf("the shared driver's Poll panicked: %v", p))
			v.mu.Unlock()
		}
	}()
	o.saw(o.op.Poll(nil).Access)
}

// callBack calls each operation's onChange, counted already; a panic in
// one is dropped, as drivers drop them.
func callBack(os []*operation) {
	for _, o := range os {
		func() {
			defer o.returned()
			defer func() { _ = recover() }()
			if o.onChange != nil {
				o.onChange()
			}
		}()
	}
}

// Close closes the view, never the shared driver: from then on the view
// refuses every Put, Get, Lookup, registration and Recycle. It is refused
// with an error wrapping [contract.ErrDriverRejected], changing nothing,
// unless a Drain of the view answered true, every registration made
// through it is revoked, and none of its lookups is inside the store.
// Closing a closed view returns nil.
func (v *View) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch {
	case v.closed:
		return nil
	case v.broken != "":
		return fmt.Errorf("%w: driverview: close: %s, so the view's work can never be proven ended", contract.ErrDriverRejected, v.broken)
	case !v.drainedOK:
		return fmt.Errorf("%w: driverview: close: no Drain of the view has answered true", contract.ErrDriverRejected)
	case v.registering > 0 || v.liveLocked() > 0:
		return fmt.Errorf("%w: driverview: close: %d registrations made through the view are not revoked", contract.ErrDriverRejected, v.liveLocked()+v.registering)
	case v.lookups > 0:
		return fmt.Errorf("%w: driverview: close: %d lookups of the view are still inside the store", contract.ErrDriverRejected, v.lookups)
	}
	v.closed = true
	return nil
}
