package conformance

import (
	"fmt"
	"strings"
	"time"

	"github.com/kvshare/kvshare/contract"
)

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
	if (w.polled || w.insidePolls.Load() > 0) && cond(w.last) {
		st := w.last
		w.mu.Unlock()
		return st, true
	}
	w.mu.Unlock()
	st, ok := w.await(cond)
	if ok {
		return st, true
	}
	st = w.poll()
	if cond(st) {
		w.b.r.Errorf("%s: %s (rows %v, access %v), but onChange was not called after the change (waited %v): onChange is called whenever results or access change",
			w.label, what, st.Rows, st.Access, w.b.h.Wait)
		if w.b.run.seenSilent(w.b.name) {
			w.b.r.Logf("the driver changed an operation without calling onChange: from now on the run's waits poll instead of waiting for onChange")
		}
		return st, true
	}
	w.b.r.Errorf("%s: not %s within %v (rows %v, access %v)", w.label, what, w.b.h.Wait, st.Rows, st.Access)
	return st, false
}

// await waits, within the harness's Wait, until cond holds for a
// snapshot: polled after each onChange call, or, once the run saw the
// driver change an operation without calling onChange, polled again and
// again (from every 50µs to every 5ms), so that a silent driver costs
// the run one wait rather than one per operation. It reports nothing; a
// wait that runs out is counted for the run's summary.
func (w *watch) await(cond func(contract.OpState) bool) (contract.OpState, bool) {
	w.b.r.Helper()
	ctx, cancel := w.b.bound()
	defer cancel()
	pause := 50 * time.Microsecond
	for {
		var tick <-chan time.Time
		if w.b.run.silentIn() != "" {
			tick = time.After(pause)
			pause = min(2*pause, 5*time.Millisecond)
		}
		select {
		case <-w.notify:
		case <-tick:
		case <-ctx.Done():
			w.b.run.waitRanOut()
			return contract.OpState{}, false
		}
		if st := w.poll(); cond(st) {
			return st, true
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
	return fmt.Sprintf("name %q", strings.TrimPrefix(w.names[i], w.b.name+"/"))
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
