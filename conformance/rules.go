package conformance

import "github.com/kvshare/kvshare/contract"

// The driver rules every snapshot is held to. The caller of each holds
// w.mu; findings wait in the watch until the check's goroutine reports
// them.

// checkDst holds one Poll to what it must do with dst: append the rows
// to dst[:0], which had room for every row, and keep nothing of it, nor
// hand out a slice of its own: the snapshot the poll before returned
// (in the other buffer, or wherever the driver put it) must still read
// as it did. The caller holds w.mu.
func (w *watch) checkDst(dst, rows []contract.RowStatus) {
	if len(rows) > 0 && len(rows) <= cap(dst) && &rows[0] != &dst[:1][0] {
		w.onceLocked("dst", "%s: Poll returned its %d statuses in a slice other than the dst it was given, which had room for every row: Poll appends to dst[:0] and allocates nothing once dst is big enough",
			w.label, len(rows))
	}
	if !w.polled {
		return
	}
	for i, s := range w.lastRaw {
		if i < len(w.lastOwn) && s != w.lastOwn[i] {
			w.onceLocked("kept", "%s: the snapshot the previous Poll returned changed after it returned (row %d (%s) read %v, now %v): the statuses belong to the caller, and the driver never keeps dst",
				w.label, i, w.row(i), w.lastOwn[i], s)
			return
		}
	}
}

// check holds one snapshot to the driver rules, recording each kind of
// violation once per operation.
func (w *watch) check(st contract.OpState) {
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
	case w.left == contract.Unprovable && st.Access == contract.Ended && w.recyclable.Load() && !w.recycled:
		w.left, w.recycled = contract.Ended, true // the one change a Recycle makes
	case w.left == contract.Unprovable && st.Access != contract.Unprovable:
		w.doubt = true
		once("access", "%s: access was unprovable and now reads %v: Unprovable is terminal but for the one change to Ended a Recycle makes", w.label, st.Access)
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
