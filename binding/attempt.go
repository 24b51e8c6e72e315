package binding

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/kvshare/kvshare/contract"
)

// direction is which way an attempt moves rows.
type direction uint8

const (
	fetch   direction = iota + 1 // store → slots (driver Get)
	publish                      // slots → store (driver Put)
)

func (d direction) String() string {
	if d == fetch {
		return "fetch"
	}
	return "publish"
}

// attempt is one submitted view: the backend's [contract.Attempt]. Every
// field below the line is guarded by the backend's mutex.
type attempt struct {
	b     *Backend
	id    uint64
	dir   direction
	view  contract.View
	hint  contract.Hint
	total int // rows in the view
	done  chan struct{}

	// ---- guarded by b.mu ----
	s          *scratch             // nil once given back (quiesced, handover over)
	delivered  []bool               // Ready rows, view order; frozen once known
	statuses   []contract.RowStatus // final status per row, view order; frozen once known
	knownCh    chan struct{}        // made on first Known, closed when the outcome is known
	handing    bool                 // the submitter may still hand calls over
	handed     int                  // rows handed over so far (a prefix of the view)
	stop       bool                 // hand no more calls over
	cancelled  bool
	cancelFrom int // calls from this index on are to be asked to Cancel
	fault      error
	faultAt    int // view row of fault, or -1
	pending    int // calls handed whose results are not recorded
	accessOpen int // calls handed whose access has not ended (unprovable ones stay)
	unprovable int // calls whose access can never be proven ended
	known      bool
	outcome    contract.Outcome
	quiesced   bool
	deadline   *time.Timer // forces the outcome at the attempt's deadline; nil once known, or without one
}

var _ contract.Attempt = (*attempt)(nil)

// newAttempt builds the attempt of a validated view whose names take
// nameBytes bytes, with scratch from the backend's pool.
func newAttempt(b *Backend, dir direction, v contract.View, h contract.Hint, nameBytes int) *attempt {
	a := &attempt{
		b:          b,
		dir:        dir,
		view:       v,
		hint:       h,
		done:       make(chan struct{}),
		handing:    true,
		faultAt:    -1,
		cancelFrom: math.MaxInt,
	}
	rows := v.Rows()
	a.s = b.scratch.get(rows, nameBytes, len(v.Groups))
	for gi, g := range v.Groups {
		a.s.groups[gi] = a.total
		a.total += len(g.Slots)
	}
	a.delivered = make([]bool, a.total)
	a.statuses = make([]contract.RowStatus, a.total)
	return a
}

// closedChan is the channel Known returns once the outcome is known.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// String returns the attempt's label, "attempt <id> (fetch)" or
// "attempt <id> (publish)", as Shutdown reports it.
func (a *attempt) String() string { return fmt.Sprintf("attempt %d (%v)", a.id, a.dir) }

// Outcome returns the outcome once it is known. Its Delivered slice is the
// attempt's own and is never written again.
func (a *attempt) Outcome() (contract.Outcome, bool) {
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	return a.outcome, a.known
}

// Quiesced reports whether no driver can touch the attempt's slots any
// more.
func (a *attempt) Quiesced() bool {
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	return a.quiesced
}

// Done returns a channel closed at quiescence.
func (a *attempt) Done() <-chan struct{} { return a.done }

// Known returns a channel closed once the outcome is known. It is made on
// first use, so that an attempt nobody waits on costs no channel.
func (a *attempt) Known() <-chan struct{} {
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	if a.known {
		return closedChan
	}
	if a.knownCh == nil {
		a.knownCh = make(chan struct{})
	}
	return a.knownCh
}

// Wait returns the outcome once it is known, or ctx's error if ctx ends
// first (an outcome known by then wins).
func (a *attempt) Wait(ctx context.Context) (contract.Outcome, error) {
	select {
	case <-a.Known():
	case <-ctx.Done():
		if o, ok := a.Outcome(); ok {
			return o, nil
		}
		return contract.Outcome{}, ctx.Err()
	}
	o, _ := a.Outcome()
	return o, nil
}

// Cancel stops handing the attempt's calls over (those rows end
// Cancelled) and asks the driver to cancel the calls it holds whose
// results are not known, including a call inside Put or Get right now
// (asked as soon as its operation arrives). Calls already running run
// on; quiescence waits for them. Cancel after the outcome is known does
// nothing. It makes no fault: rows that did not arrive are simply
// undelivered.
func (a *attempt) Cancel() {
	b := a.b
	b.mu.Lock()
	if a.known || a.cancelled {
		b.mu.Unlock()
		return
	}
	a.cancelled = true
	a.stop = true
	cancels := a.cancelLocked(0)
	b.mu.Unlock()
	b.cancelCalls(cancels)
}

// cancelLocked marks every call from index from on to be cancelled
// (a call still inside Put or Get is cancelled when its operation
// arrives, see enter) and returns those handed over whose results are
// not recorded and whose operation is known, to be asked now.
func (a *attempt) cancelLocked(from int) []*call {
	a.cancelFrom = min(a.cancelFrom, from)
	if a.s == nil || from >= len(a.s.calls) {
		return nil
	}
	var cs []*call
	for _, c := range a.s.calls[from:] {
		if !c.resultsDone && c.op != nil {
			cs = append(cs, c)
		}
	}
	return cs
}

// noteFaultLocked keeps the fault of the earliest row in view order.
func (a *attempt) noteFaultLocked(row int, err error) {
	if a.known {
		return
	}
	if a.faultAt < 0 || row < a.faultAt {
		a.fault, a.faultAt = err, row
	}
}

// settleLocked publishes the outcome once every call handed over has its
// results and no more can be handed over, and quiescence once, on top,
// every call's access has ended. It reports whether it published either.
func (b *Backend) settleLocked(a *attempt) bool {
	published := false
	if !a.known && !a.handing && a.pending == 0 {
		b.knowLocked(a, a.fault)
		published = true
	}
	if a.known && !a.quiesced && (!a.handing || a.stop) && a.accessOpen == 0 {
		a.quiesced = true
		close(a.done)
		delete(b.open, a)
		b.broadcastLocked()
		published = true
	}
	if a.quiesced && !a.handing && a.s != nil {
		// No driver touches the names, rows or buffers any more, and the
		// submitter is done with them.
		b.scratch.put(a.s)
		a.s = nil
	}
	return published
}

// forceLocked sets the outcome now, with what is known: rows whose results
// are not recorded are undelivered. Nothing more is handed over.
func (b *Backend) forceLocked(a *attempt, fault error) bool {
	a.stop = true
	if a.known {
		return false
	}
	b.knowLocked(a, fault)
	b.settleLocked(a)
	return true
}

// knowLocked sets the outcome: rows never handed over are Cancelled,
// rows handed over without a verdict yet (a forced outcome) stay Pending.
func (b *Backend) knowLocked(a *attempt, fault error) {
	for i := a.handed; i < a.total; i++ {
		a.statuses[i] = contract.Cancelled
	}
	if a.deadline != nil {
		a.deadline.Stop() // the outcome is known: nothing left to force
		a.deadline = nil
	}
	a.known = true
	a.outcome = contract.Outcome{Delivered: a.delivered, Rows: a.statuses, Fault: fault}
	if a.knownCh != nil {
		close(a.knownCh)
	}
}
