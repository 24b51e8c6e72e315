package conformance

import (
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// A Drain stops taking work whatever it answers (rule 5). So after every
// Drain that answers false the suite submits a row in each direction the
// driver serves (a put, a get) over a spare region no operation uses,
// and each must be refused with ErrDriverRejected: a Drain that gives up
// (its context ended while a row was held in the store, a worker was
// inside onChange, an operation is Unprovable) must have stopped
// admission first.

// spareBeforeDrain lends and registers the spare region, once, right
// before the check's first Drain (a driver may refuse registrations
// after one), when that Drain may answer false: some operation's access
// was not seen end, or an onChange call is still running. A check whose
// first Drain finds everything ended can provoke no false one later
// (nothing is admitted after a Drain), so it lends none. Its label is
// its own, so the regions the check lends keep their names. A driver
// that does not register it leaves the probes out.
func (b *bench) spareBeforeDrain() {
	b.r.Helper()
	if b.drains > 0 || b.spare != nil || b.hung || b.closed || !b.inFlight() {
		return
	}
	a, err := mapArena(&b.mem, "spare", b.h.SlotBytes, 1, b.kind())
	if err != nil {
		b.r.Errorf("%v", err)
		return
	}
	b.mem.Lock()
	b.arenas = append(b.arenas, a)
	b.mem.Unlock()
	var reg contract.Registration
	var rerr error
	ok, p := b.call("Register", func() { reg, rerr = b.d.Register(a.region) })
	switch {
	case !ok:
		return
	case p != nil:
		a.keep = "Register panicked"
		b.r.Errorf("Register of the spare region panicked: %v", p)
		return
	}
	if _, err := b.recordRegistration(reg, rerr, false, a); err == nil {
		b.spare = a
	}
}

// inFlight reports whether an operation the check admitted may still
// keep a Drain from answering true: its access was not seen Ended, or an
// onChange call of it has not returned.
func (b *bench) inFlight() bool {
	for _, w := range b.watches {
		if !w.ended() || w.calls.Load() != w.returns.Load() {
			return true
		}
	}
	return false
}

// refuseAfterFalseDrain submits, after a Drain that answered false, a
// row over the spare region in every direction the driver serves, and a
// lookup of a fresh name for a contract.Looker (see refuseLookupAfter):
// each must be refused.
func (b *bench) refuseAfterFalseDrain() {
	b.r.Helper()
	if b.hung {
		return
	}
	b.falseDrains++
	b.refuseLookupAfter(fmt.Sprintf("after-false-drain-%d", b.falseDrains), "after a Drain that answered false",
		"a Drain stops taking work, lookups included, whatever it answers (this one answered false)")
	if b.spare == nil || b.hung {
		return
	}
	b.refuseSpan(fmt.Sprintf("after-false-drain-%d", b.falseDrains), b.spare.span(0),
		"a Drain stops taking work, whatever it answers (this one answered false)")
}
