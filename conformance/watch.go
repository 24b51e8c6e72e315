package conformance

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kvshare/kvshare/contract"
)

// watch follows one admitted operation the way the backend does: it
// polls only when the driver's onChange says something changed (plus one
// last poll when a wait runs out, to tell a silent driver from a slow
// one), and holds every snapshot to the driver rules: one status per
// row, final statuses that never change, access that leaves Open only
// after every row is final and never changes again.
//
// A watch whose operation is nil (a call that panicked, or returned
// neither an operation nor an error) stands for an operation the suite
// cannot follow: the memory of its spans is never freed.
type watch struct {
	b     *bench
	dir   Direction
	batch contract.RowBatch
	label string
	// beforeDrain: submitted before any Drain returned true, so every
	// onChange call of it must come before that Drain returned.
	beforeDrain bool

	op     atomic.Pointer[contract.Operation]
	notify chan struct{} // one pending wake-up; onChange never blocks on it

	calls     atomic.Int64 // onChange calls entered
	returns   atomic.Int64 // onChange calls returned
	lateCalls atomic.Int64 // onChange calls after a Drain returned true

	// inCallback, when set before submission, runs inside every onChange
	// call with the operation (nil before the call returned it).
	inCallback func(op contract.Operation)

	mu       sync.Mutex // serialises validated polls
	polled   bool
	last     contract.OpState     // the latest snapshot
	final    []contract.RowStatus // the first final status seen per row
	left     contract.Access      // the first access other than Open, or Open
	doubt    bool                 // access changed after leaving Open
	reported map[string]bool
}

func newWatch(b *bench, dir Direction, batch contract.RowBatch, label string) *watch {
	return &watch{
		b:        b,
		dir:      dir,
		batch:    batch,
		label:    label,
		notify:   make(chan struct{}, 1),
		final:    make([]contract.RowStatus, len(batch.Rows)),
		reported: map[string]bool{},
	}
}

// onChange is the callback the watch hands the driver.
func (w *watch) onChange() {
	w.calls.Add(1)
	defer w.returns.Add(1)
	if w.b.drainedTrue.Load() {
		w.lateCalls.Add(1)
	}
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

// operation returns the operation, or nil if the suite cannot follow it.
func (w *watch) operation() contract.Operation {
	if p := w.op.Load(); p != nil {
		return *p
	}
	return nil
}

// poll takes a snapshot through Poll (bounded by the harness's Wait) and
// checks it against what the watch saw before.
func (w *watch) poll() contract.OpState {
	w.b.r.Helper()
	op := w.operation()
	if op == nil {
		w.b.r.Fatalf("%s: the suite cannot poll an operation the driver never returned", w.label)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var st contract.OpState
	done, p := w.b.call(w.label+": Poll", func() { st = op.Poll() })
	switch {
	case !done:
		return w.last
	case p != nil:
		w.doubt = true
		if w.b.soft {
			w.b.r.Errorf("%s: Poll panicked: %v", w.label, p)
			return w.last
		}
		w.b.r.Fatalf("%s: Poll panicked: %v", w.label, p)
	}
	w.check(st)
	w.polled = true
	w.last = st
	return st
}

// check holds one snapshot to the driver rules, reporting each kind of
// violation once per operation.
func (w *watch) check(st contract.OpState) {
	w.b.r.Helper()
	once := w.onceLocked
	if len(st.Rows) != len(w.batch.Rows) {
		once("count", "%s: Poll returned %d row statuses for a batch of %d rows: Poll returns exactly one status per row",
			w.label, len(st.Rows), len(w.batch.Rows))
	}
	for i, s := range st.Rows {
		if i >= len(w.final) {
			break
		}
		if s > contract.Cancelled {
			once("status", "%s: row %d (key %q) reads %v, which is no status", w.label, i, w.batch.Rows[i].Key, s)
			continue
		}
		if f := w.final[i]; f.Final() && s != f {
			once("final", "%s: row %d (key %q) was final %v and now reads %v: a final status never changes",
				w.label, i, w.batch.Rows[i].Key, f, s)
		} else if s.Final() && !f.Final() {
			w.final[i] = s
		}
	}
	switch {
	case w.left == contract.Unprovable && st.Access != contract.Unprovable:
		w.doubt = true
		once("access", "%s: access was unprovable and now reads %v: Unprovable is terminal", w.label, st.Access)
	case w.left != contract.Open && st.Access != w.left:
		w.doubt = true
		once("access", "%s: access was %v and now reads %v: access leaves Open once and never changes again",
			w.label, w.left, st.Access)
	case w.left == contract.Open && st.Access != contract.Open:
		w.left = st.Access
	}
	if st.Access > contract.Unprovable {
		w.doubt = true
		once("access-value", "%s: access reads %v, which is no access state", w.label, st.Access)
	}
	if st.Access != contract.Open {
		for i, s := range st.Rows {
			if !s.Final() {
				once("early-end", "%s: access is %v while row %d (key %q) is still %v: access leaves Open only after every row is final",
					w.label, st.Access, i, w.batch.Rows[i].Key, s)
				break
			}
		}
	}
}

// onceLocked reports a finding of one kind once per operation. The
// caller holds w.mu.
func (w *watch) onceLocked(kind, format string, args ...any) {
	w.b.r.Helper()
	if w.reported[kind] {
		return
	}
	w.reported[kind] = true
	w.b.r.Errorf(format, args...)
}

// afterTrueDrain holds the operation to rule 2 at the moment a Drain
// returned true: its access ended, so an onChange call followed that
// change and returned before Drain could answer, and no call of it is
// still running (nor began since).
func (w *watch) afterTrueDrain() {
	w.b.r.Helper()
	if w.operation() == nil {
		return
	}
	returned := w.returns.Load()
	running := w.calls.Load() - returned
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case running > 0:
		w.onceLocked("drain-callback", "%s: Drain returned true while %d onChange call(s) of the operation had not returned: a worker calls onChange before it counts itself finished, so Drain cannot return before the last callback",
			w.label, running)
	case returned == 0:
		w.onceLocked("drain-callback", "%s: Drain returned true, yet no onChange call of the operation had returned: its access ended, and the callback for that change returns before Drain may answer true",
			w.label)
	}
}

// done is what most waits wait for: every row final and access no
// longer Open.
func done(st contract.OpState) bool { return st.Settled() && st.Access != contract.Open }

// wait waits, within the harness's Wait, until cond holds for a snapshot
// polled after an onChange call. It returns the snapshot and whether
// cond held. When the wait runs out it polls once more: if cond holds
// then, the driver changed the operation without calling onChange, which
// is a violation; if not, the operation is too slow or stuck.
func (w *watch) wait(what string, cond func(contract.OpState) bool) (contract.OpState, bool) {
	w.b.r.Helper()
	if w.operation() == nil {
		w.b.r.Fatalf("%s: the suite cannot wait for an operation the driver never returned", w.label)
	}
	w.mu.Lock()
	if w.polled && cond(w.last) {
		st := w.last
		w.mu.Unlock()
		return st, true
	}
	w.mu.Unlock()
	ctx, cancel := w.b.bound()
	defer cancel()
	for {
		select {
		case <-w.notify:
			if st := w.poll(); cond(st) {
				return st, true
			}
		case <-ctx.Done():
			st := w.poll()
			if cond(st) {
				w.b.r.Errorf("%s: %s (rows %v, access %v), but onChange was not called after the change (waited %v): onChange is called whenever results or access change",
					w.label, what, st.Rows, st.Access, w.b.h.Wait)
				return st, true
			}
			w.b.r.Errorf("%s: not %s within %v (rows %v, access %v)", w.label, what, w.b.h.Wait, st.Rows, st.Access)
			return st, false
		}
	}
}

// settle waits until every row is final and access left Open, and fails
// the check if that does not happen.
func (w *watch) settle() contract.OpState {
	w.b.r.Helper()
	st, ok := w.wait("settled", done)
	if !ok {
		w.b.r.Fatalf("%s: cannot go on with an operation that does not settle", w.label)
	}
	return st
}

// ended reports whether the watch saw access end, and nothing since
// casts doubt on it: the memory of its spans may be released.
func (w *watch) ended() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.operation() != nil && w.left == contract.Ended && !w.doubt
}

// touches reports whether any of the batch's spans lies in a.
func (w *watch) touches(a *arena) bool {
	for _, row := range w.batch.Rows {
		for _, s := range row.Spans {
			if a.owns(s) {
				return true
			}
		}
	}
	return false
}

// expect reports rows whose final status is not one of want.
func (w *watch) expect(st contract.OpState, why string, want ...contract.RowStatus) bool {
	w.b.r.Helper()
	ok := true
	for i, s := range st.Rows {
		if i >= len(w.batch.Rows) {
			break
		}
		if !containsStatus(want, s) {
			w.b.r.Errorf("%s: row %d (key %q) ended %v, want %s: %s", w.label, i, w.batch.Rows[i].Key, s, statusList(want), why)
			ok = false
		}
	}
	return ok
}

func containsStatus(list []contract.RowStatus, s contract.RowStatus) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func statusList(list []contract.RowStatus) string {
	parts := make([]string, len(list))
	for i, s := range list {
		parts[i] = s.String()
	}
	return strings.Join(parts, " or ")
}

// describe names a batch for messages: `put of 2 rows (keys "a", "b")`,
// each key shown without the check's common prefix.
func describe(dir Direction, b contract.RowBatch, prefix string) string {
	keys := make([]string, 0, len(b.Rows))
	for _, r := range b.Rows {
		keys = append(keys, fmt.Sprintf("%q", strings.TrimPrefix(r.Key, prefix)))
	}
	if len(keys) > 4 {
		keys = append(keys[:3], "…")
	}
	if len(b.Rows) == 1 {
		return fmt.Sprintf("%v of 1 row (key %s)", dir, keys[0])
	}
	return fmt.Sprintf("%v of %d rows (keys %s)", dir, len(b.Rows), strings.Join(keys, ", "))
}
