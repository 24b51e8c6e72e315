package binding

import (
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// poll reads the call's operation and records what it says. It is the
// onChange the driver calls, from any goroutine, as often as it likes;
// once the call's access is recorded it returns without asking the
// driver. One goroutine polls a call at a time (pollMu), so each
// snapshot is recorded before the next is taken; an onChange that finds
// the call being polled does not wait: it marks the change (repoll) and
// returns, and the goroutine polling polls once more after it lets go.
// Every change is so seen by a poll that began after it, and a burst of
// changes costs a few polls instead of one each: a driver announcing
// each of n rows' ends would otherwise have the backend read all n rows
// n times.
func (b *Backend) poll(c *call) {
	c.repoll.Store(true)
	// Let go, then look at the mark: a change marked while the call was
	// polled is seen here, or by the goroutine that took the call since.
	for c.repoll.Load() && c.pollMu.TryLock() {
		c.repoll.Store(false)
		if !b.pollOnce(c) {
			return
		}
	}
}

// pollOnce polls the call once, under pollMu (held on entry, let go
// before it acts on what the poll said), and records the snapshot. It
// returns false once polling the call is over: its access recorded, or
// a violation.
func (b *Backend) pollOnce(c *call) bool {
	b.mu.Lock()
	op := c.op
	done := c.accessDone
	b.mu.Unlock()
	if op == nil || done {
		c.pollMu.Unlock()
		return op == nil // not admitted yet: the admission polls
	}
	st, panicked := pollOp(op, c.polls)
	if panicked != nil {
		c.pollMu.Unlock()
		b.violate(c, "Poll panicked", fmt.Sprint(panicked))
		return false
	}
	cancels, published, unprovable, rule, detail := b.apply(c, st)
	c.pollMu.Unlock()
	if rule != "" {
		b.violate(c, rule, detail)
		return false
	}
	if unprovable {
		b.log.Warn("kvshare/binding: driver cannot prove a call's access ended; its memory is kept until a reclaim gives it back",
			"call", c.String(), "rows", len(c.batch.Rows), "bytes", c.bytes)
	}
	b.cancelCalls(cancels)
	b.callWake(published)
	return true
}

func pollOp(op contract.Operation, dst []contract.RowStatus) (st contract.OpState, panicked any) {
	defer func() {
		if p := recover(); p != nil {
			panicked = p
		}
	}()
	return op.Poll(dst[:0]), nil
}

// apply records a snapshot of the call's operation: its results once every
// row is final, then its access end once access leaves Open. It returns
// the calls to cancel (a fetch fault), whether an outcome or quiescence
// was published, whether the access became unprovable, and the rule a
// snapshot that breaks the protocol broke (recording nothing of it).
func (b *Backend) apply(c *call, st contract.OpState) (cancels []*call, published, unprovable bool, rule, detail string) {
	a := c.a
	b.mu.Lock()
	defer b.mu.Unlock()
	if c.accessDone {
		return nil, false, false, "", ""
	}
	if rule, detail = check(c, st); rule != "" {
		return nil, false, false, rule, detail
	}
	if !c.resultsDone && st.Settled() {
		cancels = b.recordLocked(c, st.Rows)
	}
	if c.resultsDone && st.Access != contract.Open {
		unprovable = st.Access == contract.Unprovable
		b.endAccessLocked(c, unprovable)
	}
	return cancels, b.settleLocked(a), unprovable, "", ""
}

// check returns the rule a snapshot breaks, or "". A snapshot that breaks
// none has its final statuses remembered, so that a later one that
// changes a final status (to Pending or to another verdict) breaks the
// rule that a final status never changes. It runs under pollMu and b.mu.
func check(c *call, st contract.OpState) (rule, detail string) {
	if len(st.Rows) != len(c.batch.Rows) {
		return "Poll returned the wrong number of results", fmt.Sprintf("%d results for %d rows", len(st.Rows), len(c.batch.Rows))
	}
	if st.Access > contract.Unprovable {
		return "Poll returned an unknown access state", st.Access.String()
	}
	settled := true
	for i, s := range st.Rows {
		if s > contract.Cancelled {
			return "Poll returned an unknown row status", fmt.Sprintf("row %d: %v", i, s)
		}
		if f := c.final[i]; f != contract.Pending && s != f {
			return "a final row status changed", fmt.Sprintf("row %d: %v, then %v", i, f, s)
		}
		if s == contract.Pending {
			settled = false
		}
	}
	if !settled && st.Access != contract.Open {
		return "access left Open before every row was final", "access " + st.Access.String()
	}
	for i, s := range st.Rows {
		if s != contract.Pending {
			c.final[i] = s
		}
	}
	return "", ""
}

// recordLocked records the call's final row statuses, once. A Fault row
// makes the attempt's fault (the earliest row in view order wins); in a
// fetch it also stops later calls: none more is handed over, and the
// ones already handed over are returned to be cancelled. Earlier calls
// run on, so a prefix they deliver is never lost.
func (b *Backend) recordLocked(c *call, rows []contract.RowStatus) []*call {
	a := c.a
	c.resultsDone = true
	a.pending--
	faulted := -1
	for i, s := range rows {
		b.countLocked(a, s, 1)
		if !a.known {
			a.statuses[c.first+i] = s
		}
		switch s {
		case contract.Ready:
			if !a.known {
				a.delivered[c.first+i] = true
			}
		case contract.Fault:
			if faulted < 0 {
				faulted = i
			}
		}
	}
	if faulted < 0 {
		return nil
	}
	a.noteFaultLocked(c.first+faulted, fmt.Errorf("%w: group %d row %d (key %q)",
		ErrRowFault, c.group, c.start+faulted, c.batch.Key(faulted)))
	if a.dir != fetch {
		return nil
	}
	a.stop = true
	return a.cancelLocked(c.index + 1)
}

// violate contains a driver that broke the protocol in call c: the first
// violation stops the backend taking submissions; the call's rows Fault
// unless its results were recorded (then the violation is the attempt's
// fault from the row after the call), and its access is held as
// unprovable unless its end was recorded. The attempt hands nothing more
// over; other attempts stop at their next handover, and their calls
// already in the driver run on.
func (b *Backend) violate(c *call, rule, detail string) {
	a := c.a
	v := &ViolationError{Rule: rule, Call: c.String(), Detail: detail}
	b.mu.Lock()
	first := b.violation == nil
	if first {
		b.violation = v
		b.broadcastLocked()
	}
	a.stop = true
	if c.resultsDone {
		// The rows have their verdicts, but the attempt stops after
		// this call all the same: say why.
		a.noteFaultLocked(c.first+len(c.batch.Rows), v)
	} else {
		b.faultCallLocked(c, v)
	}
	wasDone := c.accessDone
	b.endAccessLocked(c, true)
	published := b.settleLocked(a)
	b.mu.Unlock()
	if first {
		b.log.Error("kvshare/binding: driver broke the protocol; the backend takes no more submissions",
			"rule", rule, "call", v.Call, "detail", detail)
	}
	if !wasDone {
		b.log.Warn("kvshare/binding: call held as unprovable after a protocol violation; its memory is kept for good",
			"call", v.Call, "rows", len(c.batch.Rows), "bytes", c.bytes)
	}
	b.callWake(published)
}
