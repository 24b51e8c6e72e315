package broken

import (
	"slices"
	"sync"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// operation wraps a memdrv operation for the rules that bend what Poll
// reports or what Cancel does, or that act once access ended.
type operation struct {
	d     *Driver
	rule  Rule
	inner contract.Operation
	// Set for the rules that act once access ended or that call back
	// from Drain: the operation's direction, its caller's onChange, each
	// row's spans (copied at admission) and, for a put, key.
	dir      memdrv.Direction
	onChange func()
	spans    [][]contract.Span
	keys     []string
	batch    contract.RowBatch // NamesAfterEnd: the batch as the caller lent it

	mu              sync.Mutex
	shownReady      []bool               // ResultsChangeAfterFinal: rows Poll reported Ready
	shownUnprovable bool                 // UnprovableNotTerminal: Poll reported Unprovable
	unprovableSince time.Time            // UnprovableEndsLater: when Poll first reported Unprovable
	frozen          []contract.RowStatus // CancelEndsRunningRow, EndsAtFirstFault: what every Poll reports after the lie
	armed           bool                 // GetWritesAfterEnd, PutRereadsAfterEnd: a Poll reported Ended
	logged          bool                 // NamesAfterEnd: its finished rows were logged
	claimedEnded    bool                 // RecycleGivesUpEndsAccess: a Recycle that gave up claimed its access ended
}

// Poll returns the wrapped operation's state, bent by the rule. The
// wrapped Poll appends to dst[:0] as the contract says; a rule that bends
// the statuses edits them there, in the caller's own slice, so the
// broken driver allocates nothing more than memdrv's.
func (o *operation) Poll(dst []contract.RowStatus) contract.OpState {
	o.d.enter()
	if o.rule == DrainCallbackUnderLock {
		o.d.pollLock <- struct{}{}
		defer func() { <-o.d.pollLock }()
	}
	st := o.inner.Poll(dst)
	o.mu.Lock()
	defer o.mu.Unlock()
	switch o.rule {
	case WrongResultCount:
		if n := len(st.Rows); n > 0 {
			st.Rows = st.Rows[:n-1]
		}
	case AccessEndsBeforeResults:
		if st.Access == contract.Open && !st.Settled() {
			st.Access = contract.Ended
		}
	case ResultsChangeAfterFinal:
		if o.shownReady == nil {
			o.shownReady = make([]bool, len(st.Rows))
		}
		for i, r := range st.Rows {
			if r != contract.Ready {
				continue
			}
			if o.shownReady[i] {
				st.Rows[i] = contract.Fault
			} else {
				o.shownReady[i] = true
			}
		}
	case UnprovableNotTerminal:
		if o.shownUnprovable {
			st.Access = contract.Ended
		} else if st.Access == contract.Unprovable {
			o.shownUnprovable = true
		}
	case UnprovableEndsLater:
		o.endLater(&st)
	case RecycleGivesUpEndsAccess:
		if o.claimedEnded && st.Access == contract.Unprovable {
			st.Access = contract.Ended
		}
	case CancelEndsRunningRow:
		if o.frozen != nil {
			st = contract.OpState{Rows: append(st.Rows[:0], o.frozen...), Access: contract.Ended}
		}
	case EndsAtFirstFault:
		if o.frozen == nil && !st.Settled() && slices.Contains(st.Rows, contract.Fault) {
			o.frozen = slices.Clone(st.Rows)
			for i, r := range o.frozen {
				if r == contract.Pending {
					o.frozen[i] = contract.Fault
				}
			}
		}
		if o.frozen != nil {
			st = contract.OpState{Rows: append(st.Rows[:0], o.frozen...), Access: contract.Ended}
		}
	case RowsReversed:
		slices.Reverse(st.Rows)
	case GetWritesAfterEnd, PutRereadsAfterEnd:
		if st.Access == contract.Ended && !o.armed && o.dir == o.rule.dir() {
			o.armed = true
			o.d.owe(o.afterEnd(st.Rows))
		}
	}
	return st
}

// Cancel cancels the wrapped operation, except under IgnoresCancel;
// under CancelCallsBack it then calls onChange, whatever changed.
// Under CancelEndsRunningRow, when a row is still running once the
// wrapped Cancel returned, the operation reports itself ended from then
// on (see [CancelEndsRunningRow]).
func (o *operation) Cancel() {
	o.d.enter()
	if o.rule == IgnoresCancel {
		return
	}
	o.inner.Cancel()
	if o.rule == CancelCallsBack && o.onChange != nil {
		o.onChange()
	}
	if o.rule != CancelEndsRunningRow {
		return
	}
	st := o.inner.Poll(nil)
	if st.Settled() {
		return
	}
	for i, r := range st.Rows {
		if r == contract.Pending {
			st.Rows[i] = contract.Cancelled
		}
	}
	o.mu.Lock()
	o.frozen = st.Rows
	o.mu.Unlock()
}
