package binding

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kvshare/kvshare/contract"
)

// ErrNotRecyclable is wrapped by [Backend.Reclaim] when the backend's
// driver is no [contract.Recycler], or broke the protocol (its answers
// prove nothing, so nothing it says after a recycle is believed either).
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
// time (mu), the policy of Config.ReclaimAbove, and the counts Stats
// reports. Fields after mu are guarded by the backend's mutex.
type reclaimState struct {
	mu sync.Mutex // one Reclaim at a time

	above    int64         // Config.ReclaimAbove
	wait     time.Duration // Config.ReclaimWait, or its default
	bytes    int64         // bytes of the calls held as unprovable now
	auto     bool          // a reclaim the policy started runs
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
// call held as unprovable is read again: its access must now read Ended
// (a driver that says otherwise broke the protocol, and the call stays
// held), and its slots are lent to nobody any more. Its attempt may then
// quiesce, and Shutdown and Close can finish what they could not. Stats
// counts the reclaim, the calls and the bytes.
//
// It returns what was given back, and nil; Recycle's error when the
// driver gave up within ctx (nothing torn down and no access changed,
// though the rows it had not started ended Cancelled, as above; try
// again later); an error
// wrapping ErrRecycledClosed beside what was given back when the driver
// has no store resources any more (later submissions fail); an error
// wrapping [ErrNotRecyclable] when the driver cannot recycle. One Reclaim
// runs at a time; a second waits for the first.
func (b *Backend) Reclaim(ctx context.Context) (Reclaimed, error) {
	rc, ok := b.drv.(contract.Recycler)
	if !ok {
		return Reclaimed{}, fmt.Errorf("%w: the driver (%T) is no contract.Recycler", ErrNotRecyclable, b.drv)
	}
	b.reclaim.mu.Lock()
	defer b.reclaim.mu.Unlock()
	b.mu.Lock()
	v := b.violation
	b.mu.Unlock()
	if v != nil {
		return Reclaimed{}, fmt.Errorf("%w: the driver broke the protocol (%s)", ErrNotRecyclable, v.Rule)
	}
	start := time.Now()
	panicked, err := recycleOnce(ctx, rc)
	took := time.Since(start)
	switch {
	case panicked != nil:
		b.log.Error("kvshare/binding: the driver's Recycle panicked; nothing is given back", "panic", panicked)
		return Reclaimed{Took: took}, fmt.Errorf("kvshare/binding: reclaim: Recycle panicked: %v", panicked)
	case err != nil && !errors.Is(err, contract.ErrRecycledClosed):
		return Reclaimed{Took: took}, fmt.Errorf("kvshare/binding: reclaim: %w", err)
	}
	got := b.giveBack()
	got.Took = took
	b.log.Info("kvshare/binding: reclaimed the memory of unprovable calls", "calls", got.Calls, "rows", got.Rows, "bytes", got.Bytes, "took", took, "err", err)
	if err != nil {
		return got, fmt.Errorf("kvshare/binding: reclaim: %w", err)
	}
	return got, nil
}

func recycleOnce(ctx context.Context, rc contract.Recycler) (panicked any, err error) {
	defer func() { panicked = recover() }()
	return nil, rc.Recycle(ctx)
}

// giveBack reads every call held as unprovable again, after a Recycle
// that ended every access, and gives back those that read Ended.
func (b *Backend) giveBack() Reclaimed {
	b.mu.Lock()
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
	b.mu.Unlock()
	var got Reclaimed
	published := false
	for _, c := range held {
		c.pollMu.Lock()
		st, panicked := pollOp(c.op, c.polls)
		c.pollMu.Unlock()
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
	b.broadcastLocked()
	if b.closing && !b.retiring && !b.released && b.stuck == "" {
		b.retiring = true
		go b.retire() // it had stopped: every attempt left held an unprovable call
	}
	b.mu.Unlock()
	b.callWake(published)
	return got
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
// and reports whether a reclaim should start now.
func (b *Backend) heldLocked(c *call) bool {
	b.reclaim.bytes += c.bytes
	r := &b.reclaim
	if r.above <= 0 || r.auto || r.bytes < r.above || b.violation != nil {
		return false
	}
	r.auto = true
	return true
}

// autoReclaim is the reclaim Config.ReclaimAbove starts.
func (b *Backend) autoReclaim() {
	ctx, cancel := context.WithTimeout(context.Background(), b.reclaim.wait)
	defer cancel()
	b.mu.Lock()
	held := b.reclaim.bytes
	b.mu.Unlock()
	b.log.Warn("kvshare/binding: memory held by unprovable calls reached ReclaimAbove; reclaiming", "bytes", held, "above", b.reclaim.above)
	got, err := b.Reclaim(ctx)
	if err != nil {
		b.log.Warn("kvshare/binding: reclaim failed", "err", err, "given back", got.Bytes)
	}
	b.mu.Lock()
	b.reclaim.auto = false
	again := b.reclaim.above > 0 && b.reclaim.bytes >= b.reclaim.above && b.violation == nil && err == nil && got.Calls > 0
	if again {
		b.reclaim.auto = true
	}
	b.mu.Unlock()
	if again {
		go b.autoReclaim() // more was held meanwhile
	}
}
