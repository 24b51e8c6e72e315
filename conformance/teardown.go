package conformance

import (
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// teardown drains, revokes and closes, each only on proof (after a
// Drain that returned true it cancels every operation, which must not
// call back); looks one last time, within the check, at the memory,
// names and objects watched since their operations' access ended; and
// decides which memory the end of the run may unmap.
func (b *bench) teardown() {
	b.soft = true
	b.during = ""
	for i := len(b.undo) - 1; i >= 0; i-- {
		// A hook may need the driver's locks: bounded, like a driver call.
		if ok, p := b.within(b.undo[i]); !ok {
			b.hung = true
			b.r.Errorf("teardown: letting go of a hold, pause or writer the check staged did not return within %v", b.h.Wait)
		} else if p != nil {
			b.r.Errorf("teardown: letting go of a hold, pause or writer the check staged panicked: %v", p)
		}
	}
	if !b.hung {
		for _, w := range b.watches {
			if w.operation() != nil && !b.hung {
				w.mu.Lock()
				open := !w.polled || w.left == contract.Open
				w.mu.Unlock()
				if open {
					w.wait("settled at the end of the check, with every hold released", done)
				}
			}
		}
	}
	// One more poll of every operation: a last look at each against the
	// rules, and a driver call after every access end the check saw.
	for _, w := range b.watches {
		if w.operation() != nil && !b.hung && !b.closed {
			w.poll()
		}
	}
	drained := false
	if !b.hung && !b.closed {
		drained = b.drain(false)
	}
	if drained {
		b.cancelAll() // no callback may follow, Cancel's included
	}
	for _, l := range b.lendings {
		if !l.revoked && !b.hung {
			if err := b.unregister(l); err != nil {
				b.r.Logf("teardown: revoking registration %d: %v", l.handle, err)
			}
		}
	}
	if !b.hung {
		for _, f := range b.putFindings() {
			b.r.Errorf("%s", f)
		}
	}
	if drained && !b.closed && !b.hung && b.allRevoked() {
		var err error
		b.calm.Store(true)
		done, p := b.call("Close", func() { err = b.d.Close() })
		switch {
		case !done: // reported by call
		case p != nil:
			b.r.Errorf("Close panicked: %v", p)
		case err != nil:
			b.r.Errorf("Close after a Drain that returned true, with every region unregistered: %v", err)
		default:
			b.closed = true
			b.refuseLookupAfterClose()
		}
	}
	b.calm.Store(true)
	for _, f := range b.lateFindings() {
		b.r.Errorf("%s", f)
	}
	for _, a := range b.lent() {
		if why := b.keepReason(a); why != "" {
			b.r.Logf("kept region %s (%d bytes) mapped for the life of the process: %s", a.label, len(a.mem), why)
			continue
		}
		b.freeable = append(b.freeable, a)
	}
}

// lateFindings returns what the suite finds only after the fact, and has
// not reported yet: memory watched since an access end that changed,
// names handed to the key maker after their access ended, onChange calls
// after a Drain that returned true, and what onChange calls found. The teardown reports them within the check, and the end
// of the run once more, for whatever came after the check ended.
func (b *bench) lateFindings() []string {
	out := append(b.memoryFindings(), b.names.findings()...)
	for _, w := range b.watches {
		out = append(out, w.findings()...)
		out = append(out, w.lateFindings()...)
	}
	return out
}

// lent returns the arenas of the check, in the order it lent them.
func (b *bench) lent() []*arena {
	b.mem.Lock()
	defer b.mem.Unlock()
	return append([]*arena(nil), b.arenas...)
}

// unmap unmaps the memory the teardown found free, unless something
// found since says the driver may still touch it. Only the end of the
// run calls it, after its last look.
func (b *bench) unmap(r reporter) {
	r.Helper()
	for _, a := range b.freeable {
		if a.keep != "" {
			r.Logf("%s: kept region %s (%d bytes) mapped for the life of the process: %s", b.name, a.label, len(a.mem), a.keep)
			continue
		}
		if err := a.free(); err != nil {
			r.Errorf("%s: conformance: unmapping region %s: %v", b.name, a.label, err)
		}
	}
	b.freeable = nil
}

func (b *bench) allRevoked() bool {
	for _, l := range b.lendings {
		if !l.revoked {
			return false
		}
	}
	return true
}

// keepReason says why a's memory must stay mapped, or "" if nothing can
// touch it any more: every registration of it was revoked, and every
// operation whose spans lie in it ended its access.
func (b *bench) keepReason(a *arena) string {
	if b.hung {
		return "the driver stopped answering, so nothing it holds can be proven released"
	}
	if a.keep != "" {
		return a.keep
	}
	for _, w := range b.watches {
		if !w.touches(a) {
			continue
		}
		if w.operation() == nil {
			return w.label + ": the driver gave the suite no operation to follow, so its access may still be open"
		}
		if !w.ended() {
			w.mu.Lock()
			acc := w.left
			w.mu.Unlock()
			return fmt.Sprintf("%s: access was never proven ended (last seen %v)", w.label, acc)
		}
	}
	for _, l := range b.lendings {
		for _, x := range l.arenas {
			if x == a && !l.revoked {
				return fmt.Sprintf("registration %d was not revoked", l.handle)
			}
		}
	}
	return ""
}
