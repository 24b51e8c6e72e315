package binding

import (
	"time"
)

// flightList holds the calls whose access is open, oldest first: calls
// join at the tail as they start, so the head is the oldest call, and a
// cursor (watch) marks the first call not yet logged as slow. Guarded by
// the backend's mutex.
type flightList struct {
	head, tail *call
	n          int64
	watch      *call // first call not yet logged as slow; those before it were
}

func (l *flightList) push(c *call) {
	c.prev, c.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = c
	} else {
		l.head = c
	}
	l.tail = c
	l.n++
	if l.watch == nil {
		l.watch = c
	}
}

func (l *flightList) remove(c *call) {
	if l.watch == c {
		l.watch = c.next
	}
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		l.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		l.tail = c.prev
	}
	c.prev, c.next = nil, nil
	l.n--
}

// watchLocked arms the slow-call timer for a call that just started, if
// it is not armed already. An armed timer may fire before this call is
// due; it then re-arms for the first call not yet logged.
func (b *Backend) watchLocked(c *call) {
	if b.slow <= 0 || b.slowArmed {
		return
	}
	b.armLocked(b.slow)
}

// unarmLocked stops the slow-call timer once no call is in flight, so
// an idle backend holds no timer. A callback already on its way finds
// nothing due and does not re-arm.
func (b *Backend) unarmLocked() {
	if b.slowArmed {
		b.slowTimer.Stop()
		b.slowArmed = false
	}
}

func (b *Backend) armLocked(d time.Duration) {
	b.slowArmed = true
	if b.slowTimer == nil {
		b.slowTimer = time.AfterFunc(d, b.slowCalls)
		return
	}
	b.slowTimer.Reset(d)
}

// slowCalls runs when the slow-call timer fires: it logs, once each, the
// calls that have been in flight for SlowCall or longer, and re-arms for
// the next one due.
func (b *Backend) slowCalls() {
	type slowCall struct {
		name string
		rows int
		age  time.Duration
	}
	var due []slowCall
	b.mu.Lock()
	b.slowArmed = false
	now := time.Now()
	w := b.flight.watch
	for ; w != nil; w = w.next {
		age := now.Sub(w.began)
		if age < b.slow {
			break
		}
		due = append(due, slowCall{w.String(), len(w.batch.Rows), age})
	}
	b.flight.watch = w
	if w != nil {
		b.armLocked(b.slow - now.Sub(w.began))
	}
	b.mu.Unlock()
	for _, s := range due {
		b.log.Warn("kvshare/binding: driver call running long", "call", s.name, "rows", s.rows, "age", s.age)
	}
}
