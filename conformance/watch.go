package conformance

import (
	"fmt"
	"slices"
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
// It polls into buffers of its own, two of them, each with room for
// every row, used in turn: so it also sees a Poll that does not append
// to the dst it is given, and a driver that keeps a dst (or hands out a
// slice of its own) and changes a snapshot after Poll returned it.
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
	bufs     [2][]contract.RowStatus // the dst of each poll, in turn
	turn     int                     // the buffer of the next poll
	lastRaw  []contract.RowStatus    // the Rows the latest Poll returned, as it returned them
	last     contract.OpState        // the latest snapshot, its Rows a copy of lastRaw
	final    []contract.RowStatus    // the first final status seen per row
	left     contract.Access         // the first access other than Open, or Open
	doubt    bool                    // access changed after leaving Open
	reported map[string]bool
}

func newWatch(b *bench, dir Direction, batch contract.RowBatch, label string) *watch {
	return &watch{
		b:        b,
		dir:      dir,
		batch:    batch,
		label:    label,
		notify:   make(chan struct{}, 1),
		bufs:     [2][]contract.RowStatus{make([]contract.RowStatus, 0, len(batch.Rows)), make([]contract.RowStatus, 0, len(batch.Rows))},
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

// poll takes a snapshot through Poll (bounded by the harness's Wait),
// into the watch's next buffer, and checks it against what the watch saw
// before. The snapshot it returns is the watch's own copy.
func (w *watch) poll() contract.OpState {
	w.b.r.Helper()
	op := w.operation()
	if op == nil {
		w.b.r.Fatalf("%s: the suite cannot poll an operation the driver never returned", w.label)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var st contract.OpState
	dst := w.bufs[w.turn][:0]
	w.turn = 1 - w.turn
	done, p := w.b.call(w.label+": Poll", func() { st = op.Poll(dst) })
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
	w.checkDst(dst, st.Rows)
	w.check(st)
	w.polled = true
	w.lastRaw = st.Rows
	w.last = contract.OpState{Rows: slices.Clone(st.Rows), Access: st.Access}
	return w.last
}

// checkDst holds one Poll to what it must do with dst: append the rows
// to dst[:0], which had room for every row, and keep nothing of it, nor
// hand out a slice of its own: the snapshot the poll before returned
// (in the other buffer, or wherever the driver put it) must still read
// as it did. The caller holds w.mu.
func (w *watch) checkDst(dst, rows []contract.RowStatus) {
	w.b.r.Helper()
	if len(rows) > 0 && len(rows) <= cap(dst) && &rows[0] != &dst[:1][0] {
		w.onceLocked("dst", "%s: Poll returned its %d statuses in a slice other than the dst it was given, which had room for every row: Poll appends to dst[:0] and allocates nothing once dst is big enough",
			w.label, len(rows))
	}
	if !w.polled {
		return
	}
	for i, s := range w.lastRaw {
		if i < len(w.last.Rows) && s != w.last.Rows[i] {
			w.onceLocked("kept", "%s: the snapshot the previous Poll returned changed after it returned (row %d (%s) read %v, now %v): the statuses belong to the caller, and the driver never keeps dst",
				w.label, i, w.row(i), w.last.Rows[i], s)
			return
		}
	}
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
			once("status", "%s: row %d (%s) reads %v, which is no status", w.label, i, w.row(i), s)
			continue
		}
		if f := w.final[i]; f.Final() && s != f {
			once("final", "%s: row %d (%s) was final %v and now reads %v: a final status never changes",
				w.label, i, w.row(i), f, s)
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
				once("early-end", "%s: access is %v while row %d (%s) is still %v: access leaves Open only after every row is final",
					w.label, st.Access, i, w.row(i), s)
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
			w.b.r.Errorf("%s: row %d (%s) ended %v, want %s: %s", w.label, i, w.row(i), s, statusList(want), why)
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

// row names row i of the batch for messages: `name "obj-0"`, the name
// shown without the check's common part (see describe).
func (w *watch) row(i int) string {
	return fmt.Sprintf("name %q", strings.TrimPrefix(string(w.batch.Rows[i].Name), w.b.name+"/"))
}

// describe names a batch for messages: `put of 2 rows (names "a", "b")`,
// each name shown without the check's common part (its name and "/"):
// names are what a check picks, and short; keys, which the suite's key
// maker builds from them, are shown where they matter.
func describe(dir Direction, b contract.RowBatch, common string) string {
	names := make([]string, 0, len(b.Rows))
	for _, r := range b.Rows {
		names = append(names, fmt.Sprintf("%q", strings.TrimPrefix(string(r.Name), common)))
	}
	if len(names) > 4 {
		names = append(names[:3], "…")
	}
	if len(b.Rows) == 1 {
		return fmt.Sprintf("%v of 1 row (name %s)", dir, names[0])
	}
	return fmt.Sprintf("%v of %d rows (names %s)", dir, len(b.Rows), strings.Join(names, ", "))
}
