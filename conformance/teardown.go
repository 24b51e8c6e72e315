package conformance

import (
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// teardown drains, revokes, closes and frees, each only on proof.
func (b *bench) teardown() {
	b.soft = true
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
	drained := false
	if !b.hung && !b.closed {
		drained = b.drain(false)
	}
	for _, l := range b.lendings {
		if !l.revoked && !b.hung {
			if err := b.unregister(l); err != nil {
				b.r.Logf("teardown: revoking registration %d: %v", l.handle, err)
			}
		}
	}
	if drained && !b.closed && !b.hung && b.allRevoked() {
		var err error
		done, p := b.call("Close", func() { err = b.d.Close() })
		switch {
		case !done: // reported by call
		case p != nil:
			b.r.Errorf("Close panicked: %v", p)
		case err != nil:
			b.r.Errorf("Close after a Drain that returned true, with every region unregistered: %v", err)
		default:
			b.closed = true
		}
	}
	for _, w := range b.watches {
		if n := w.lateCalls.Load(); n > 0 && w.beforeDrain {
			b.r.Errorf("%s: onChange was called %d time(s) after Drain returned true: no callback follows a Drain that returned true", w.label, n)
		}
	}
	for _, a := range b.arenas {
		if a.freed {
			continue
		}
		if why := b.keepReason(a); why != "" {
			b.r.Logf("kept region %s (%d bytes) mapped for the life of the process: %s", a.label, len(a.mem), why)
			continue
		}
		if err := a.free(); err != nil {
			b.r.Errorf("conformance: unmapping region %s: %v", a.label, err)
		}
	}
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
