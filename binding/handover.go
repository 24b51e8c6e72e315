package binding

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvshare/kvshare/contract"
)

// call is one driver call: a run of rows of one group, one RowBatch. Every
// field below the first line is guarded by the backend's mutex, and
// polls and final by pollMu as well.
type call struct {
	a      *attempt
	index  int // in the attempt's calls
	group  int
	start  int // first row in the group
	first  int // first row in the view
	batch  contract.RowBatch
	bytes  int64
	began  time.Time
	notify func() // the onChange handed to the driver

	// pollMu makes each Poll and the recording of what it said one step,
	// so snapshots are recorded in the order they were taken and the
	// status buffers have one writer. repoll is a change announced that
	// no poll has begun after yet: an onChange that finds pollMu taken
	// leaves it for the goroutine polling, which polls once more (see
	// Backend.poll).
	pollMu sync.Mutex
	repoll atomic.Bool
	polls  []contract.RowStatus // the buffer Poll appends to (scratch)
	final  []contract.RowStatus // each row's first final status seen (scratch)

	// ---- guarded by b.mu ----
	op          contract.Operation // set once the driver admitted the call
	resultsDone bool
	accessDone  bool // access ended, or held as unprovable
	unprovable  bool
	prev, next  *call // in the backend's flight list while access is open
}

// String names the call as logs and violations do.
func (c *call) String() string {
	return fmt.Sprintf("%v group %d rows %d-%d", c.a, c.group, c.start, c.start+len(c.batch.Rows)-1)
}

// handOver cuts each group into calls and hands each call to the driver
// as soon as it is cut, on the submitter's goroutine: the first call
// reaches the driver before the rest of the view is cut. A call's rows
// are built in the attempt's scratch as it is cut, its names copied
// there (the driver borrows them until its access ends, which may be
// after the caller, who only lends the view until the outcome, reuses
// them). Rows it never hands over end Cancelled.
func (b *Backend) handOver(a *attempt) {
	s := a.s
groups:
	for gi := range a.view.Groups {
		g := &a.view.Groups[gi]
		base := s.groups[gi]
		region, _ := b.regions.Region(g.Region)
		// The region's base and slot size in locals: a call of
		// region.Slot a row copies the whole region first.
		slotBase, slotBytes := region.Base, region.SlotBytes
		s.cutter.Reset(g.Names, region.SlotBytes, b.cut)
		for {
			cut, ok := s.cutter.Next()
			if !ok {
				break
			}
			first, end := base+cut.Start, base+cut.End
			for i := first; i < end; i++ {
				ri := i - base
				off := len(s.names)
				s.names = append(s.names, g.Names[ri]...) // within capacity: never moves
				s.spans[i] = contract.Span{Addr: slotBase + uintptr(int64(g.Slots[ri])*slotBytes), Len: slotBytes}
				// Field by field: a whole contract.Row built on the stack
				// and copied costs a store-forwarding stall a row.
				row := &s.rows[i]
				row.Name = s.names[off:len(s.names):len(s.names)]
				row.Spans = s.spans[i : i+1 : i+1]
			}
			c := &call{
				a:     a,
				group: gi,
				start: cut.Start,
				first: first,
				batch: contract.RowBatch{Keys: b.keys, Rows: s.rows[first:end:end]},
				bytes: int64(cut.Len()) * region.SlotBytes,
				polls: s.polls[first:end:end],
				final: s.final[first:end:end],
			}
			if !b.start(c) {
				break groups
			}
			b.enter(c)
		}
	}
	b.mu.Lock()
	a.handing = false
	b.countLocked(a, contract.Cancelled, int64(a.total-a.handed))
	published := b.settleLocked(a)
	b.mu.Unlock()
	b.callWake(published)
}

// start counts the call as started, before it enters the driver, unless
// the attempt stopped or the driver broke the protocol. It reports
// whether the call may enter the driver.
func (b *Backend) start(c *call) bool {
	a := c.a
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.violation != nil && !a.stop {
		a.stop = true
		a.noteFaultLocked(c.first, fmt.Errorf("group %d row %d never handed over: %w", c.group, c.start, b.violation))
	}
	if a.stop {
		return false
	}
	c.index = len(a.s.calls)
	a.s.calls = append(a.s.calls, c)
	a.handed = c.first + len(c.batch.Rows)
	a.pending++
	a.accessOpen++
	c.began = time.Now()
	b.rowsLent += int64(len(c.batch.Rows))
	b.bytesLent += c.bytes
	b.flight.push(c)
	b.watchLocked(c)
	return true
}

// enter hands the call to the driver and deals with the answer. A
// callback may come before Put or Get returns (from the driver's worker
// or synchronously inside the call); it finds no operation yet and
// returns, and the poll after admission reads what it announced. If the
// attempt was asked to stop while the call was inside the driver (a
// fetch fault, Cancel, Shutdown), the operation is asked to Cancel as
// soon as it arrives.
func (b *Backend) enter(c *call) {
	c.notify = func() { b.poll(c) }
	op, panicked, err := b.admit(c)
	method := "Get"
	if c.a.dir == publish {
		method = "Put"
	}
	switch {
	case panicked != nil:
		b.violate(c, method+" panicked", fmt.Sprint(panicked))
	case err != nil && op != nil:
		// An operation and an error: the driver may have started the
		// operation, whatever the error claims. Hold it as unprovable.
		b.mu.Lock()
		c.op = op
		b.mu.Unlock()
		b.violate(c, method+" returned an operation and an error", err.Error())
	case err != nil && errors.Is(err, contract.ErrDriverRejected):
		b.reject(c, err)
	case err != nil:
		b.violate(c, method+" returned an error that does not wrap ErrDriverRejected", err.Error())
	case op == nil:
		b.violate(c, method+" returned a nil operation and no error", "")
	default:
		b.mu.Lock()
		c.op = op
		late := c.index >= c.a.cancelFrom
		b.mu.Unlock()
		b.poll(c)
		if late {
			b.mu.Lock()
			late = !c.resultsDone && !c.accessDone
			b.mu.Unlock()
			if late {
				b.cancelCalls([]*call{c})
			}
		}
	}
}

// admit makes the driver call, recovering a panic.
func (b *Backend) admit(c *call) (op contract.Operation, panicked any, err error) {
	defer func() {
		if p := recover(); p != nil {
			op, panicked, err = nil, p, nil
		}
	}()
	if c.a.dir == publish {
		op, err = b.drv.Put(c.batch, c.notify)
	} else {
		op, err = b.drv.Get(c.batch, c.a.hint, c.notify)
	}
	return op, nil, err
}

// reject records a call the driver refused at admission: nothing escaped,
// so its rows Fault and its access counts as ended. A refused call is a
// whole call failing: the attempt hands nothing more over.
func (b *Backend) reject(c *call, err error) {
	a := c.a
	b.mu.Lock()
	a.stop = true
	b.faultCallLocked(c, fmt.Errorf("group %d rows %d-%d: %w", c.group, c.start, c.start+len(c.batch.Rows)-1, err))
	b.endAccessLocked(c, false)
	published := b.settleLocked(a)
	b.mu.Unlock()
	b.callWake(published)
}

// faultCallLocked records every row of the call as Fault, once.
func (b *Backend) faultCallLocked(c *call, err error) {
	if c.resultsDone {
		return
	}
	c.resultsDone = true
	c.a.pending--
	b.countLocked(c.a, contract.Fault, int64(len(c.batch.Rows)))
	if !c.a.known {
		for i := range c.batch.Rows {
			c.a.statuses[c.first+i] = contract.Fault
		}
	}
	c.a.noteFaultLocked(c.first, err)
}

// endAccessLocked records the call's access end, once: ended (its memory
// is free again) or unprovable (kept for good).
func (b *Backend) endAccessLocked(c *call, unprovable bool) {
	if c.accessDone {
		return
	}
	c.accessDone = true
	b.flight.remove(c)
	if b.flight.n == 0 {
		b.unarmLocked()
	}
	if unprovable {
		c.unprovable = true
		c.a.unprovable++
		b.unprovable++
		b.broadcastLocked()
		if b.heldLocked(c) {
			go b.autoReclaim()
		}
		return
	}
	c.a.accessOpen--
	b.rowsLent -= int64(len(c.batch.Rows))
	b.bytesLent -= c.bytes
}

// cancelCalls asks the driver to cancel each call's operation, outside the
// backend's lock. A panic is a protocol violation.
func (b *Backend) cancelCalls(cs []*call) {
	for _, c := range cs {
		if p := cancelOp(c.op); p != nil {
			b.violate(c, "Cancel panicked", fmt.Sprint(p))
		}
	}
}

func cancelOp(op contract.Operation) (panicked any) {
	defer func() { panicked = recover() }()
	op.Cancel()
	return nil
}
