package conformance

import (
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// checkRegisterFailsLive has the store fail a registration in a way that
// may leave it live (the FailNextRegistration hook): Register, and
// RegisterRegions for a driver that registers batches. The driver must
// say so: a *contract.RegistrationError carrying the handle, which the
// caller revokes before the memory goes. A clean refusal (an error
// wrapping ErrDriverRejected alone, or a RegistrationError without a
// handle) certifies nothing is live, and a lender would let the memory
// go while the store may still reach it.
func checkRegisterFailsLive(b *bench) {
	if b.sub.FailNextRegistration == nil {
		b.skip(skipHook, "the harness cannot make the store fail a registration that may be live (no FailNextRegistration hook)")
	}
	var refused []*watch
	a := b.lend(2, b.kind())
	b.hook("FailNextRegistration", func() { b.sub.FailNextRegistration(false) })
	l, err := b.register(a)
	refused = append(refused, b.failedLive("Register", l, err, a)...)
	if rt, ok := b.d.(contract.RegionsTogether); ok {
		as := []*arena{b.lend(2, b.kind()), b.lend(2, b.kind())}
		b.hook("FailNextRegistration", func() { b.sub.FailNextRegistration(true) })
		l, err := b.registerTogether(rt, as, nil)
		refused = append(refused, b.failedLive("RegisterRegions", l, err, as...)...)
	}
	b.quietAfter(refused)
}

// failedLive judges how the registration of as failed when the store
// failed it in a way that may leave it live: reg and err are what
// recordRegistration made of the driver's answer. A handle that came
// back must revoke the registration, after which its spans are refused;
// the same memory then registers again and moves a row (the failure was
// for that one registration). It returns the refused calls.
func (b *bench) failedLive(what string, l *lending, err error, as ...*arena) []*watch {
	b.r.Helper()
	var re *contract.RegistrationError
	switch {
	case err == nil:
		// The driver took the region after all (it asked the store
		// again, say): a live registration with its handle, which the
		// suite revokes below like any other.
		b.r.Logf("%s succeeded though the store failed the registration: the driver recovered, and the registration is live under handle %d", what, l.handle)
	case errors.As(err, &re) && re.MayBeLive():
		l = b.lendingWith(re.Registration) // recorded for teardown by recordRegistration
	case isRejected(err) || errors.As(err, &re):
		b.r.Errorf("%s failed with a clean refusal (%v) though the store failed the registration in a way that may have left it live: such a failure is a *contract.RegistrationError carrying the handle, which the caller must revoke before the memory goes", what, err)
		for _, a := range as {
			a.keep = what + " reported a clean refusal of a registration that may be live: there is no handle to revoke it with"
		}
		return nil
	default:
		return nil // reported by recordRegistration, the memory kept
	}
	if uerr := b.unregister(l); uerr != nil {
		b.r.Errorf("revoking the handle %d the failed %s carried: %v: the handle of a registration that may be live revokes it", l.handle, what, uerr)
		return nil
	}
	var refused []*watch
	for _, a := range as {
		refused = append(refused, b.refuseSpan("revoked-"+a.label, a.span(0), fmt.Sprintf("its region's failed %s was revoked through the handle it carried", what))...)
	}
	again, aerr := b.reregister(what, as)
	if aerr != nil {
		b.r.Errorf("%s of the same memory after the failed one was revoked: %v: the store's failure was for that one registration", what, aerr)
		return refused
	}
	for _, a := range as {
		b.moveRow(a, 1)
	}
	if uerr := b.unregister(again); uerr != nil {
		b.r.Errorf("revoking the registration made again: %v", uerr)
	}
	return refused
}

// reregister registers as again the way what did: one by one with
// Register, or as one batch with RegisterRegions.
func (b *bench) reregister(what string, as []*arena) (*lending, error) {
	b.r.Helper()
	if what == "RegisterRegions" {
		return b.registerTogether(b.d.(contract.RegionsTogether), as, nil)
	}
	return b.register(as[0])
}

// lendingWith returns the live lending under handle h.
func (b *bench) lendingWith(h contract.Registration) *lending {
	for _, l := range b.lendings {
		if l.handle == h && !l.revoked {
			return l
		}
	}
	b.r.Fatalf("conformance: no registration under handle %d", h)
	return nil
}
