package conformance

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kvshare/kvshare/contract"
)

// watch follows one admitted operation the way the backend does: it
// polls when the driver's onChange says something changed (plus one last
// poll when a wait runs out, to tell a silent driver from a slow one),
// and holds every snapshot to the driver rules (see rules.go).
//
// Snapshots come from two places. The check's goroutine polls into
// buffers of its own, two of them, each with room for every row, used in
// turn: so it also sees a Poll that does not append to the dst it is
// given, and a driver that keeps a dst and changes a snapshot after Poll
// returned it. And every onChange call, once the operation is known,
// polls it from inside the callback (see onChange), with a nil dst.
// Both are held to the same rules; findings wait in the watch until the
// check's goroutine reports them, since a callback may run on any
// goroutine, even after the check ended.
//
// The first snapshot, from either place, that shows access Ended seals
// the operation's memory (see seal) before any other Poll of the check
// runs (see absorb).
//
// A watch whose operation is nil (a call that panicked, or returned
// neither an operation nor an error) stands for an operation the suite
// cannot follow: the memory of its spans is never freed.
type watch struct {
	b     *bench
	dir   Direction
	batch contract.RowBatch // as the driver was handed it: its names lent (see nameBook)
	names []string          // the rows' names, the suite's own copy, for findings and keys
	lent  *lentNames        // the buffer the batch's names were lent in
	label string
	// beforeDrain: submitted before any Drain returned true, so every
	// onChange call of it must come before that Drain returned.
	beforeDrain bool

	op     atomic.Pointer[contract.Operation]
	notify chan struct{} // one pending wake-up; onChange never blocks on it

	calls       atomic.Int64 // onChange calls entered
	returns     atomic.Int64 // onChange calls returned
	lateCalls   atomic.Int64 // onChange calls after a Drain returned true
	insidePolls atomic.Int64 // polls from inside onChange that returned in time

	// recyclable: a Recycle of the driver runs, or returned nil, since
	// the operation was admitted: its access may go from Unprovable to
	// Ended once (see bench.recycle).
	recyclable atomic.Bool

	// inCallback, when set before submission, runs inside every onChange
	// call with the operation (nil before the call returned it), after
	// the poll every callback makes.
	inCallback func(op contract.Operation)

	mu        sync.Mutex // guards what follows
	polled    bool       // the check's goroutine polled
	bufs      [2][]contract.RowStatus
	turn      int                  // the buffer of the check's next poll
	lastRaw   []contract.RowStatus // the Rows the check's latest Poll returned, as it returned them
	lastOwn   []contract.RowStatus // a copy of them, taken then
	last      contract.OpState     // the latest snapshot, its Rows a copy
	final     []contract.RowStatus // the first final status seen per row
	left      contract.Access      // the first access other than Open, or Open
	doubt     bool                 // access changed after leaving Open
	recycled  bool                 // access went from Unprovable to Ended in a Recycle
	reported  map[string]bool      // kinds of finding already made
	pending   []string             // findings the check's goroutine has not reported yet
	lateShown int64                // late callbacks already reported
}

func newWatch(b *bench, dir Direction, batch contract.RowBatch, label string) *watch {
	names := make([]string, len(batch.Rows))
	for i, r := range batch.Rows {
		names[i] = string(r.Name)
	}
	return &watch{
		b:        b,
		dir:      dir,
		batch:    batch,
		names:    names,
		label:    label,
		notify:   make(chan struct{}, 1),
		bufs:     [2][]contract.RowStatus{make([]contract.RowStatus, 0, len(batch.Rows)), make([]contract.RowStatus, 0, len(batch.Rows))},
		final:    make([]contract.RowStatus, len(batch.Rows)),
		reported: map[string]bool{},
	}
}

// onChange is the callback the watch hands the driver. Once the
// operation is known (Put or Get returned it) every call polls it, on a
// goroutine of its own, and waits for that Poll within half the
// harness's Wait: a driver that calls onChange holding a lock Poll needs
// shows as a Poll that cannot return until the callback did. (Half, so
// that a driver call the callback came from still returns within Wait.)
// The callback then returns, and the finding waits for the check's
// goroutine.
func (w *watch) onChange() {
	w.calls.Add(1)
	defer w.returns.Add(1)
	if w.b.drainedTrue.Load() {
		w.lateCalls.Add(1)
	}
	w.pollInside()
	if f := w.inCallback; f != nil {
		var op contract.Operation
		if p := w.op.Load(); p != nil {
			op = *p
		}
		f(op)
	}
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// pollInside polls the operation from inside onChange (see onChange) and
// holds the snapshot to the rules.
func (w *watch) pollInside() {
	op := w.operation()
	if op == nil || w.b.calm.Load() {
		return
	}
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		defer func() { _ = recover() }() // a Poll that panics is the check goroutine's to report
		w.b.pollMu.Lock()
		defer w.b.pollMu.Unlock()
		if w.b.calm.Load() {
			return // the check ended: nothing to hold it to any more
		}
		st := op.Poll(nil)
		w.absorb(st, nil, false)
	}()
	limit := w.b.h.Wait / 2
	if w.b.patientAside(limit).Wait(returned) {
		w.insidePolls.Add(1)
	} else {
		w.mu.Lock()
		w.onceLocked("stuck", "%s: Poll called from inside onChange did not return within %v: onChange must never run under a lock Poll needs",
			w.label, limit)
		w.mu.Unlock()
	}
}

// operation returns the operation, or nil if the suite cannot follow it.
func (w *watch) operation() contract.Operation {
	if p := w.op.Load(); p != nil {
		return *p
	}
	return nil
}

// poll takes a snapshot through Poll (bounded by the harness's Wait),
// into the watch's next buffer, holds it to the rules, reports what they
// found, and returns the watch's own copy of it.
func (w *watch) poll() contract.OpState {
	w.b.r.Helper()
	op := w.operation()
	if op == nil {
		w.b.r.Fatalf("%s: the suite cannot poll an operation the driver never returned", w.label)
	}
	w.mu.Lock()
	dst := w.bufs[w.turn][:0]
	w.turn = 1 - w.turn
	w.mu.Unlock()
	var st contract.OpState
	done, p := w.b.call(w.label+": Poll", func() {
		w.b.pollMu.Lock()
		defer w.b.pollMu.Unlock()
		st = op.Poll(dst)
		w.absorb(st, dst, true)
	})
	switch {
	case !done:
		return w.latest()
	case p != nil:
		w.mu.Lock()
		w.doubt = true
		w.mu.Unlock()
		if w.b.soft {
			w.b.r.Errorf("%s: Poll panicked: %v", w.label, p)
			return w.latest()
		}
		w.b.r.Fatalf("%s: Poll panicked: %v", w.label, p)
	}
	w.report()
	return w.latest()
}

// absorb holds a snapshot to the rules, records it as the latest and,
// when it is the first to show access Ended, seals the operation's
// memory and names first. The caller holds the bench's poll lock, so
// snapshots are taken in the order Poll returned them, and no other Poll
// of the check runs before the seal; and the first snapshot to show the
// end becomes the latest only once the seal is done, so that a wait that
// takes the latest snapshot (see wait) returns only after it.
func (w *watch) absorb(st contract.OpState, dst []contract.RowStatus, own bool) {
	if last, firstEnd := w.take(st, dst, own); firstEnd {
		w.b.sealOp(w, st)
		w.mu.Lock()
		w.last = last
		w.mu.Unlock()
	}
}

// take holds a snapshot to the rules and records it as the latest. dst
// is the buffer a poll of the check's goroutine (own) gave Poll. It
// reports whether this is the first snapshot to show access Ended, so
// that the caller seals the operation's memory; that snapshot it returns
// instead of recording it, for the caller to record once sealed.
func (w *watch) take(st contract.OpState, dst []contract.RowStatus, own bool) (last contract.OpState, firstEnd bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	before := w.left
	if own {
		w.checkDst(dst, st.Rows)
	}
	w.check(st)
	if own {
		w.polled = true
		w.lastRaw = st.Rows
		w.lastOwn = slices.Clone(st.Rows)
	}
	if st.Access != w.last.Access || !slices.Equal(st.Rows, w.last.Rows) {
		w.b.moves.Add(1)
	}
	last = contract.OpState{Rows: slices.Clone(st.Rows), Access: st.Access}
	if before == contract.Open && w.left == contract.Unprovable {
		w.b.run.event() // the end of a thorough run looks again one Wait later
	}
	firstEnd = before != contract.Ended && w.left == contract.Ended && !w.doubt
	if !firstEnd {
		w.last = last
	}
	return last, firstEnd
}

// latest returns the latest snapshot.
func (w *watch) latest() contract.OpState {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// report reports, on the check's goroutine, what the watch found and has
// not reported yet.
func (w *watch) report() {
	w.b.r.Helper()
	for _, f := range w.findings() {
		w.b.r.Errorf("%s", f)
	}
}

// findings returns what the watch found and has not reported yet, and
// forgets it.
func (w *watch) findings() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.pending
	w.pending = nil
	return out
}

// onceLocked records a finding of one kind once per operation, for the
// check's goroutine to report. The caller holds w.mu.
func (w *watch) onceLocked(kind, format string, args ...any) {
	if w.reported[kind] {
		return
	}
	w.reported[kind] = true
	w.pending = append(w.pending, fmt.Sprintf(format, args...))
}

// lateFindings returns the onChange calls that came after a Drain
// returned true and were not reported yet, for an operation submitted
// before that Drain.
func (w *watch) lateFindings() []string {
	if !w.beforeDrain {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.lateCalls.Load()
	if n <= w.lateShown {
		return nil
	}
	more := n - w.lateShown
	w.lateShown = n
	return []string{fmt.Sprintf("%s: onChange was called %d time(s) after Drain returned true: no callback follows a Drain that returned true", w.label, more)}
}

// afterTrueDrain holds the operation to rule 2 at the moment a Drain
// returned true: its access ended, so an onChange call followed that
// change and returned before Drain could answer, and no call of it is
// still running (nor began since).
//
// It then polls the operation: after a true Drain its access reads
// Ended, every row final, whichever hooks the harness has, so a Drain
// that answers true while an operation is live is caught in every check
// that drains.
func (w *watch) afterTrueDrain() {
	w.b.r.Helper()
	if w.operation() == nil {
		return
	}
	returned := w.returns.Load()
	running := w.calls.Load() - returned
	w.mu.Lock()
	switch {
	case running > 0:
		w.onceLocked("drain-callback", "%s: Drain returned true while %d onChange call(s) of the operation had not returned: a worker calls onChange before it counts itself finished, so Drain cannot return before the last callback",
			w.label, running)
	case returned == 0:
		w.onceLocked("drain-callback", "%s: Drain returned true, yet no onChange call of the operation had returned: its access ended, and the callback for that change returns before Drain may answer true",
			w.label)
	}
	w.mu.Unlock()
	if w.b.hung {
		w.report()
		return
	}
	if st := w.poll(); st.Access != contract.Ended {
		w.mu.Lock()
		w.onceLocked("drain-live", "%s: Drain returned true while the operation's access was %v (rows %v): Drain answers true only if every access ended and none is unprovable",
			w.label, st.Access, st.Rows)
		w.mu.Unlock()
		w.report()
	}
}
