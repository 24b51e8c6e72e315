package binding

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/contract"
)

// ErrNotRecyclable is wrapped by [Backend.Reclaim] when the backend's
// driver is no [contract.Recycler], or broke the protocol (its answers
// prove nothing, so nothing it says after a recycle is believed either),
// or when the backend, shut down with nothing held, is giving everything
// back (draining and unregistering: no Recycle may run beside that).
var ErrNotRecyclable = errors.New("kvshare/binding: nothing to reclaim with")

// Reclaimed is what one [Backend.Reclaim] gave back.
type Reclaimed struct {
	// Calls, Rows and Bytes are the calls held as unprovable whose
	// access the driver's Recycle ended, and their rows and slot bytes:
	// memory lent again to nobody.
	Calls, Rows, Bytes int64
	// Took is how long the driver's Recycle took.
	Took time.Duration
}

// reclaimState is the backend's reclaim bookkeeping: one reclaim at a
// time (turn), the policy of Config.ReclaimAbove, and the counts Stats
// reports. Fields after wait are guarded by the backend's mutex.
type reclaimState struct {
	turn turn // one Reclaim in the driver at a time

	above int64         // Config.ReclaimAbove
	wait  time.Duration // Config.ReclaimWait, or its default

	bytes   int64 // bytes of the calls held as unprovable now
	pending int   // reclaims under way: called (the automatic one: decided) and not ended
	auto    bool  // the automatic reclaim is under way
	missed  bool  // a call was held after the automatic reclaim read which calls are held

	reclaims int64
	calls    int64
	given    int64 // bytes given back
}

// Reclaim asks the driver to recycle ([contract.Recycler]): to tear down
// what could still reach lent memory and start afresh. It is how the
// memory of calls held as unprovable (a transfer the store gave up on,
// which might still run) is won back safely.
//
// The driver refuses work while it recycles, so calls handed over
// meanwhile, and rows it had not started, end Cancelled or Fault; calls
// inside the store keep the verdicts the store gives them. Once Recycle
// returns nil, or an error wrapping [contract.ErrRecycledClosed], every
// call that was held as unprovable when the reclaim began is read again:
// its access must now read Ended (a driver that says otherwise broke the
// protocol, and the call stays held), and its slots are lent to nobody
// any more. A call held after the reclaim began may have been admitted
// after Recycle returned: it stays held, for the next reclaim. The
// attempts given back may then quiesce, and Shutdown and Close can
// finish what they could not; while a reclaim is under way, they wait
// for it rather than answer that nothing can change. Stats counts the
// reclaim, the calls and the bytes.
//
// It returns what was given back, and nil; Recycle's error when the
// driver gave up within ctx (nothing torn down and no access changed,
// though the rows it had not started ended Cancelled, as above; try
// again later); an error
// wrapping ErrRecycledClosed beside what was given back when the driver
// has no store resources any more (later submissions fail); an error
// wrapping [ErrNotRecyclable] when the driver cannot recycle. One Reclaim
// runs at a time: a second waits for the first within its own ctx, and
// returns ctx's error if ctx ends first.
func (b *Backend) Reclaim(ctx context.Context) (Reclaimed, error) {
	rc, ok := b.drv.(contract.Recycler)
	if !ok {
		return Reclaimed{}, fmt.Errorf("%w: the driver (%T) is no contract.Recycler", ErrNotRecyclable, b.drv)
	}
	b.mu.Lock()
	if b.handingBack {
		b.mu.Unlock()
		return Reclaimed{}, fmt.Errorf("%w: the backend shut down and is giving everything back (nothing is held as unprovable)", ErrNotRecyclable)
	}
	b.reclaim.pending++
	b.mu.Unlock()
	got, _, err := b.reclaimWith(ctx, rc, false)
	return got, err
}

// reclaimWith runs one reclaim already counted in pending, and ends it:
// whatever happens, the count is given back in the same critical section
// as what the reclaim changed (reclaimEndedLocked). For the automatic
// reclaim it reports whether another is to start.
func (b *Backend) reclaimWith(ctx context.Context, rc contract.Recycler, auto bool) (Reclaimed, bool, error) {
	if err := b.reclaim.turn.take(ctx); err != nil {
		return Reclaimed{}, b.endReclaim(auto), fmt.Errorf("kvshare/binding: reclaim: waiting for the reclaim under way: %w", err)
	}
	defer b.reclaim.turn.give()
	b.mu.Lock()
	v := b.violation
	held := b.heldCallsLocked() // held before Recycle is called: admitted before it
	if auto {
		b.reclaim.missed = false
	}
	b.mu.Unlock()
	if v != nil {
		return Reclaimed{}, b.endReclaim(auto), fmt.Errorf("%w: the driver broke the protocol (%s)", ErrNotRecyclable, v.Rule)
	}
	start := time.Now()
	panicked, err := recycleOnce(ctx, rc)
	took := time.Since(start)
	switch {
	case panicked != nil:
		b.log.Error("kvshare/binding: the driver's Recycle panicked; nothing is given back", "panic", panicked)
		return Reclaimed{Took: took}, b.endReclaim(auto), fmt.Errorf("kvshare/binding: reclaim: Recycle panicked: %v", panicked)
	case err != nil && !errors.Is(err, contract.ErrRecycledClosed):
		return Reclaimed{Took: took}, b.endReclaim(auto), fmt.Errorf("kvshare/binding: reclaim: %w", err)
	}
	got, again := b.giveBack(held, auto)
	got.Took = took
	b.log.Info("kvshare/binding: reclaimed the memory of unprovable calls", "calls", got.Calls, "rows", got.Rows, "bytes", got.Bytes, "took", took, "err", err)
	if err != nil {
		return got, again, fmt.Errorf("kvshare/binding: reclaim: %w", err)
	}
	return got, again, nil
}

func recycleOnce(ctx context.Context, rc contract.Recycler) (panicked any, err error) {
	defer func() { panicked = recover() }()
	return nil, rc.Recycle(ctx)
}

// heldCallsLocked returns every call held as unprovable now whose
// operation is known.
func (b *Backend) heldCallsLocked() []*call {
	var held []*call
	for a := range b.open {
		if a.s == nil {
			continue
		}
		for _, c := range a.s.calls {
			if c.unprovable && c.op != nil {
				held = append(held, c)
			}
		}
	}
	return held
}

// giveBack reads the calls held before a Recycle that ended every access
// again, gives back those that read Ended, and ends the reclaim.
func (b *Backend) giveBack(held []*call, auto bool) (got Reclaimed, again bool) {
	published := false
	for _, c := range held {
		c.pollMu.Lock()
		st, panicked := pollOp(c.op, c.polls)
		c.pollMu.Unlock()
		if c.repoll.Load() {
			b.poll(c) // a change announced while this read held the call
		}
		switch {
		case panicked != nil:
			b.violate(c, "Poll panicked", fmt.Sprint(panicked))
			continue
		case st.Access != contract.Ended:
			b.violate(c, "access not Ended after a Recycle that ended every access", "access "+st.Access.String())
			continue
		}
		b.mu.Lock()
		if c.unprovable && b.violation == nil {
			b.releaseLocked(c)
			got.Calls++
			got.Rows += int64(len(c.batch.Rows))
			got.Bytes += c.bytes
			published = b.settleLocked(c.a) || published
		}
		b.mu.Unlock()
	}
	b.mu.Lock()
	b.reclaim.reclaims++
	b.reclaim.calls += got.Calls
	b.reclaim.given += got.Bytes
	again = b.reclaimEndedLocked(auto, got.Calls > 0)
	b.mu.Unlock()
	b.callWake(published)
	return got, again
}

// endReclaim ends a reclaim that gave nothing back.
func (b *Backend) endReclaim(auto bool) (again bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reclaimEndedLocked(auto, false)
}

// reclaimEndedLocked ends one reclaim: it is no longer under way, so
// Shutdown and the retiring goroutine look again at what is held; the
// retiring goroutine, if it had stopped, starts again (the reclaim may
// have given back what stopped it); and for the automatic reclaim it
// decides, in this same step, whether another starts at once (what is
// held still reaches ReclaimAbove, and this one gave something back or a
// call was held after it read which were) — so there is no moment in
// which a reclaim is due and none is under way.
func (b *Backend) reclaimEndedLocked(auto, gaveBack bool) (again bool) {
	r := &b.reclaim
	r.pending--
	if auto {
		again = r.above > 0 && r.bytes >= r.above && b.violation == nil && (gaveBack || r.missed)
		r.auto = again
		if again {
			r.pending++
		}
	}
	b.broadcastLocked()
	if b.closing && !b.retiring && !b.released && b.stuck == "" {
		b.retiring = true
		go b.retire()
	}
	return again
}

// releaseLocked gives back a call held as unprovable whose access a
// Recycle ended: its slots are lent to nobody any more.
func (b *Backend) releaseLocked(c *call) {
	c.unprovable = false
	c.a.unprovable--
	c.a.accessOpen--
	b.unprovable--
	b.rowsLent -= int64(len(c.batch.Rows))
	b.bytesLent -= c.bytes
	b.reclaim.bytes -= c.bytes
}

// heldLocked counts a call just held as unprovable against the policy,
// and reports whether the automatic reclaim should start now (counted as
// under way from this moment).
func (b *Backend) heldLocked(c *call) bool {
	r := &b.reclaim
	r.bytes += c.bytes
	if r.auto {
		r.missed = true // the reclaim under way may have read the held calls already
		return false
	}
	if r.above <= 0 || r.bytes < r.above || b.violation != nil {
		return false
	}
	r.auto = true
	r.pending++
	return true
}

// autoReclaim is the reclaim Config.ReclaimAbove starts, on a goroutine
// of its own, bounded by ReclaimWait; heldLocked counted it as under way.
func (b *Backend) autoReclaim() {
	ctx, cancel := context.WithTimeout(context.Background(), b.reclaim.wait)
	defer cancel()
	b.mu.Lock()
	held := b.reclaim.bytes
	b.mu.Unlock()
	b.log.Warn("kvshare/binding: memory held by unprovable calls reached ReclaimAbove; reclaiming", "bytes", held, "above", b.reclaim.above)
	rc, _ := b.drv.(contract.Recycler) // New refused ReclaimAbove without one
	got, again, err := b.reclaimWith(ctx, rc, true)
	if err != nil {
		b.log.Warn("kvshare/binding: reclaim failed", "err", err, "given back", got.Bytes)
	}
	if again {
		go b.autoReclaim() // more was held meanwhile
	}
}
