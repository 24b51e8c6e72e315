package conformance

import (
	"context"
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// Unprovable is terminal: only a Recycle's teardown ends it (contract
// rule 3). A driver that trusts a timeout (the transfer must have
// stopped by now) turns it Ended once enough time passed, which no poll
// made at once sees. So the end of the run, after a thorough run waited
// out Wait since the last access end or Unprovable it saw, looks once
// more at every operation last seen Unprovable: it still reads
// Unprovable, a Drain asked with its context already ended answers
// false, and the regions it covers stay registered.

// recheckUnprovable looks again at the check's operations last seen
// Unprovable (see above), at the end of the run, after the check ended:
// what it finds waits in the watches (see lateFindings). Every driver
// call is bounded by Wait; one that does not return marks the driver
// hung, and nothing more is asked of it.
func (b *bench) recheckUnprovable() {
	if b.hung || b.closed {
		return
	}
	var pinned []*watch
	for _, w := range b.watches {
		// Doubt cast by a change seen earlier leaves it Unprovable here:
		// it is looked at again all the same, and says so on its own.
		w.mu.Lock()
		still := w.left == contract.Unprovable
		w.mu.Unlock()
		if still && w.operation() != nil {
			pinned = append(pinned, w)
		}
	}
	if len(pinned) == 0 {
		return
	}
	for _, w := range pinned {
		op := w.operation()
		var st contract.OpState
		if !b.lateCall(w, "Poll", func() {
			b.pollMu.Lock()
			defer b.pollMu.Unlock()
			st = op.Poll(nil)
			w.absorb(st, nil, false)
		}) {
			return
		}
		if st.Access != contract.Unprovable && !w.recyclable.Load() {
			w.lateFinding("late-access", fmt.Sprintf("at the end of the run its access reads %v, though it was last seen unprovable and no Recycle ran since it was admitted: nothing but a Recycle's teardown ends Unprovable, however long one waits", st.Access))
		}
	}
	w := pinned[0]
	var drained bool
	if !b.lateCall(w, "Drain", func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		drained = b.d.Drain(ctx)
	}) {
		return
	}
	if drained {
		w.lateFinding("drain", "Drain, asked at the end of the run with its context already ended, returned true while the operation's access was last seen unprovable: nothing but a Recycle ends Unprovable, however long one waits")
	}
	for _, l := range b.lendings {
		if l.revoked || !pinnedBy(l, pinned) {
			continue
		}
		var err error
		if !b.lateCall(w, "Unregister", func() {
			if l.together {
				err = b.d.(contract.RegionsTogether).UnregisterRegions(l.handle)
			} else {
				err = b.d.Unregister(l.handle)
			}
		}) {
			return
		}
		if err == nil {
			l.revoked = true
			w.lateFinding("unregister", fmt.Sprintf("Unregister of registration %d at the end of the run succeeded though an operation covering it was last seen unprovable: the region stays registered until a Recycle ends that access", l.handle))
		}
	}
}

// lateCall runs f, a driver call at the end of the run, bounded by Wait
// (extended only as the run's closing wait is, with nothing reported on
// the check, which ended). A panic or a call that does not return is
// recorded on w, and false returned.
func (b *bench) lateCall(w *watch, what string, f func()) bool {
	done := make(chan struct{})
	var p any
	go func() {
		defer close(done)
		defer func() { p = recover() }()
		suiteCall(f)
	}()
	switch {
	case !b.patientAside(b.h.Wait).Wait(done):
		b.hung = true
		w.lateFinding("late-"+what, fmt.Sprintf("%s at the end of the run did not return within %v", what, b.h.Wait))
		return false
	case p != nil:
		w.lateFinding("late-"+what, fmt.Sprintf("%s at the end of the run panicked: %v", what, p))
		return false
	}
	return true
}

// lateFinding records a finding of one kind on w, for the end of the run
// to report.
func (w *watch) lateFinding(kind, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onceLocked(kind, "%s: %s", w.label, text)
}

// pinnedBy reports whether an operation of ws has a span in a region of l.
func pinnedBy(l *lending, ws []*watch) bool {
	for _, w := range ws {
		for _, a := range l.arenas {
			if w.touches(a) {
				return true
			}
		}
	}
	return false
}
