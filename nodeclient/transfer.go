package nodeclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodewire"
)

// TransferOptions say how a publish or fetch runs.
type TransferOptions struct {
	// Deadline, if not zero, is when the node forces the attempt's
	// outcome: rows not final by then end Cancelled (never handed to the
	// store) or Pending (still moving), and the fault wraps
	// nodewire.ErrDeadline. Quiescence still waits for every access to
	// end. It travels as the time left when the frame is sent.
	Deadline time.Time
}

// Publish moves the view's rows from the lend's slots into the store:
// Fetch the other way. Each checks the view first (regions and slots in
// the lend, a non-empty name per slot, no more rows or bytes than the
// node takes): a bad view gets an error wrapping
// contract.ErrInvalidSubmission and the nodewire sentinel the node would
// answer with (ErrOutOfRange, ErrBadNames, ErrLimit), naming the group
// and row, and nothing is sent. Then it waits within ctx for the node
// to accept the attempt, and returns it; a refusal is a
// *nodewire.RefusedError (nodewire.ErrLimit for too many attempts in
// flight, …).
//
// The view is encoded before Publish returns: the caller may reuse its
// slices at once, but not its slots until the attempt quiesces.
//
// If ctx ends, or the connection, before the node answered, the
// request may have reached the node: Publish then returns the attempt
// with the error, cancelled. Its slots may be reused only once its Done
// is closed; its outcome says what happened (a refusal that comes later
// is its fault, every row Cancelled, and it quiesces).
func (l *Lend) Publish(ctx context.Context, v contract.View, o TransferOptions) (*Attempt, error) {
	return l.transfer(ctx, contract.PutDir, v, o)
}

// Fetch moves the view's rows from the store into the lend's slots; see
// Publish. A slot's bytes are the row's once the outcome says it was
// delivered.
func (l *Lend) Fetch(ctx context.Context, v contract.View, o TransferOptions) (*Attempt, error) {
	return l.transfer(ctx, contract.GetDir, v, o)
}

func (l *Lend) transfer(ctx context.Context, dir contract.Direction, v contract.View, o TransferOptions) (*Attempt, error) {
	what := "publish"
	if dir == contract.GetDir {
		what = "fetch"
	}
	m, err := l.transferFrame(dir, v, what, o)
	if err != nil {
		return nil, err
	}
	c := l.c
	a := newAttempt(c, 0, what, v.Rows())
	t := &transferReply{a: a, answered: make(chan struct{})}
	id, err := c.request(t)
	if err != nil {
		return nil, fmt.Errorf("kvshare/nodeclient: %s: %w", what, err)
	}
	a.id = id
	c.send(id, m, -1, nil)
	select {
	case <-t.answered:
	case <-ctx.Done():
		select {
		case <-t.answered: // answered as ctx ended: the answer wins
		default:
			a.Cancel()
			return a, fmt.Errorf("kvshare/nodeclient: %v: not yet accepted, cancelled: %w", a, ctx.Err())
		}
	}
	if err := t.refusal; err != nil {
		if errorsIsClosed(err) {
			return a, fmt.Errorf("kvshare/nodeclient: %v: %w", a, err)
		}
		return nil, fmt.Errorf("kvshare/nodeclient: %v: %w", a, err)
	}
	return a, nil
}

// transferFrame checks v against the lend and the node's limits and
// builds its frame.
func (l *Lend) transferFrame(dir contract.Direction, v contract.View, what string, o TransferOptions) (*encoded, error) {
	bad := func(sentinel error, format string, args ...any) error {
		return fmt.Errorf("%w: %w: %s of lend %d: %s", contract.ErrInvalidSubmission, sentinel, what, l.id, fmt.Sprintf(format, args...))
	}
	l.mu.Lock()
	state := l.state
	l.mu.Unlock()
	if state != lent {
		return nil, bad(nodewire.ErrUnknownLend, "the lend is %v", state)
	}
	m := &nodewire.Transfer{Dir: dir, Lend: l.id, Groups: make([]nodewire.Group, len(v.Groups))}
	rows := 0
	for gi, g := range v.Groups {
		if g.Region < 0 || g.Region >= l.g.Regions {
			return nil, bad(nodewire.ErrOutOfRange, "group %d: region %d, the lend has %d", gi, g.Region, l.g.Regions)
		}
		if len(g.Slots) != len(g.Names) {
			return nil, bad(nodewire.ErrBadNames, "group %d: %d slots and %d names", gi, len(g.Slots), len(g.Names))
		}
		slots := make([]uint32, len(g.Slots))
		for ri, s := range g.Slots {
			if s < 0 || int(s) >= l.g.SlotCount {
				return nil, bad(nodewire.ErrOutOfRange, "group %d row %d: slot %d, the lend's regions have %d", gi, ri, s, l.g.SlotCount)
			}
			if len(g.Names[ri]) == 0 {
				return nil, bad(nodewire.ErrBadNames, "group %d row %d: an empty name", gi, ri)
			}
			slots[ri] = uint32(s)
		}
		rows += len(g.Slots)
		m.Groups[gi] = nodewire.Group{Region: uint32(g.Region), Slots: slots, Names: g.Names}
	}
	if err := l.c.checkRows(rows, what); err != nil {
		return nil, fmt.Errorf("%w: %w", contract.ErrInvalidSubmission, err)
	}
	if !o.Deadline.IsZero() {
		m.Deadline = max(time.Until(o.Deadline), 1)
	}
	e := encode(m)
	if err := l.c.checkBody(e, what); err != nil {
		return nil, fmt.Errorf("%w: %w", contract.ErrInvalidSubmission, err)
	}
	return e, nil
}

// transferReply takes the node's frames for one publish or fetch:
// Accepted or Refused, then Outcome, then Quiesced.
type transferReply struct {
	a        *Attempt
	answered chan struct{} // closed at Accepted, Refused or the end of the connection
	refusal  error         // set before answered is closed, if not accepted
	accepted bool          // only the reader touches it
}

func (t *transferReply) deliver(m nodewire.Message) (bool, error) {
	a := t.a
	switch m := m.(type) {
	case *nodewire.Accepted:
		if t.accepted {
			return true, errors.New("a second accepted")
		}
		t.accepted = true
		close(t.answered)
		return false, nil
	case *nodewire.Refused:
		if t.accepted {
			return true, errors.New("a refusal of an accepted attempt")
		}
		err := m.Err()
		rows := make([]contract.RowStatus, a.rows)
		for i := range rows {
			rows[i] = contract.Cancelled
		}
		a.know(contract.Outcome{Delivered: make([]bool, a.rows), Rows: rows, Fault: err})
		a.quiesce() // refused: the node touched nothing
		t.refusal = err
		close(t.answered)
		return true, nil
	case *nodewire.Outcome:
		if !t.accepted {
			return true, errors.New("an outcome before accepted")
		}
		if len(m.Rows) != a.rows {
			return true, fmt.Errorf("an outcome of %d rows for %v of %d", len(m.Rows), a, a.rows)
		}
		o := contract.Outcome{Delivered: make([]bool, len(m.Rows)), Rows: m.Rows}
		for i, s := range m.Rows {
			o.Delivered[i] = s == contract.Ready
		}
		if m.FaultCode != 0 {
			o.Fault = fmt.Errorf("%w: %s", m.FaultCode.Err(), m.Fault)
		}
		if !a.know(o) {
			return true, errors.New("a second outcome")
		}
		return false, nil
	case *nodewire.Quiesced:
		if _, known := a.Outcome(); !known {
			return true, errors.New("quiesced before its outcome")
		}
		a.quiesce()
		return true, nil
	}
	return true, fmt.Errorf("a %v answers a %s", m.Type(), a.dir)
}

func (t *transferReply) lost(err error) {
	t.a.lost(err)
	if !t.accepted {
		t.refusal = err
		close(t.answered)
	}
}
