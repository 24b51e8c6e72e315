package broken

import (
	"sync"

	"github.com/kvshare/kvshare/contract"
)

// operation wraps a memdrv operation for the rules that bend what Poll
// reports or what Cancel does.
type operation struct {
	rule  Rule
	inner contract.Operation

	mu              sync.Mutex
	shownReady      []bool // ResultsChangeAfterFinal: rows Poll reported Ready
	shownUnprovable bool   // UnprovableNotTerminal: Poll reported Unprovable
}

// Poll returns the wrapped operation's state, bent by the rule. The
// wrapped Poll appends to dst[:0] as the contract says; a rule that bends
// the statuses edits them there, in the caller's own slice, so the
// broken driver allocates nothing more than memdrv's.
func (o *operation) Poll(dst []contract.RowStatus) contract.OpState {
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
	}
	return st
}

// Cancel cancels the wrapped operation, except under IgnoresCancel.
func (o *operation) Cancel() {
	if o.rule != IgnoresCancel {
		o.inner.Cancel()
	}
}
