package binding

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// retireTry bounds one Drain or one Unbind pass of the retiring goroutine;
// it tries again after each, for as long as it takes.
const retireTry = 10 * time.Second

// Shutdown stops taking submissions and lookups (later ones get an
// error wrapping contract.ErrSubmissionRejected), forces the outcome of
// every attempt whose outcome is not known (fault: [ErrOutcomeForced];
// calls not yet handed over end Cancelled), calls Wake, and waits within
// ctx.
//
// On its first call it starts one goroutine that asks the driver to
// cancel what it still holds for those attempts, waits for every attempt
// to quiesce and every lookup in flight to return, drains the driver,
// unregisters every region (a refusal is retried, never skipped) and
// then releases the lender's hold and closes [Backend.Closed].
//
// Shutdown returns nil once the hold is released. It returns the labels
// of what is still held when ctx ends first, or at once when what is left
// can never change (every attempt not quiesced holds an unprovable call
// and no reclaim is under way, or the hold can never be released):
// "attempt <id> (fetch|publish)" for each attempt not quiesced, in
// submission order, "lookups in flight (<n>)" while lookups have not
// returned, "reclaim under way" while a [Backend.Reclaim] (or the
// automatic one) runs, then "region <index>" for each region still
// registered, or, when nothing else is left but the hold's Release has
// not returned, "hold". Shutdown itself never calls the driver. Calling it again waits
// again; calls from several goroutines each wait within their own
// context.
//
// The owner's cleanup order: Shutdown returns no labels, so the binding
// has released the hold and no lookup is in the driver; then whoever
// opened the driver closes it, last.
func (b *Backend) Shutdown(ctx context.Context) []string {
	held, _ := b.shutdown(ctx)
	return held
}

// shutdown is Shutdown, also saying why it stopped waiting while
// something is held: ErrHeldForGood when nothing more can change, else
// ctx's error. Both are decided in the critical section that saw them.
func (b *Backend) shutdown(ctx context.Context) ([]string, error) {
	b.mu.Lock()
	published := false
	if !b.closing {
		b.closing = true
		forced := fmt.Errorf("%w: the backend was shut down", ErrOutcomeForced)
		for a := range b.open {
			a.cancelFrom = 0 // a call entering the driver now is asked to Cancel on arrival
			fault := forced
			if a.fault != nil {
				fault = fmt.Errorf("%w; before that: %w", forced, a.fault)
			}
			if b.forceLocked(a, fault) {
				published = true
			}
		}
		b.broadcastLocked()
		b.retiring = true
		go b.retire()
	}
	b.mu.Unlock()
	b.callWake(published)
	for {
		b.mu.Lock()
		if b.released {
			b.mu.Unlock()
			return nil, nil
		}
		final := b.finalLocked()
		changed := b.changedLocked()
		b.mu.Unlock()
		if final {
			return b.held(), ErrHeldForGood
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return b.held(), ctx.Err()
		}
	}
}

// finalLocked reports whether what is held can never change: the
// retiring goroutine gave up, or attempts remain, each holds an
// unprovable call (so none will quiesce and the regions stay registered)
// and no reclaim is under way that could give one back.
func (b *Backend) finalLocked() bool {
	if b.stuck != "" {
		return true
	}
	if len(b.open) == 0 || b.reclaim.pending > 0 {
		return false
	}
	for a := range b.open {
		if a.unprovable == 0 {
			return false
		}
	}
	return true
}

// held returns the labels of what is still held: attempts not quiesced,
// lookups in flight, regions not confirmed unregistered, and "hold" when
// nothing else is left but the lender's hold, whose Release has not
// returned yet.
func (b *Backend) held() []string {
	b.mu.Lock()
	open := make([]*attempt, 0, len(b.open))
	for a := range b.open {
		open = append(open, a)
	}
	lookups := b.lookupsIn
	reclaiming := b.reclaim.pending > 0
	released := b.released
	b.mu.Unlock()
	slices.SortFunc(open, func(x, y *attempt) int { return cmp.Compare(x.id, y.id) })
	var labels []string
	for _, a := range open {
		labels = append(labels, a.String())
	}
	if lookups > 0 {
		labels = append(labels, fmt.Sprintf("lookups in flight (%d)", lookups))
	}
	if reclaiming {
		labels = append(labels, reclaimLabel)
	}
	labels = append(labels, b.regions.Held()...)
	if len(labels) == 0 && !released {
		labels = append(labels, holdLabel)
	}
	return labels
}

// holdLabel is Shutdown's label for the lender's hold, when it is all
// that is left: every region is unregistered, but Release has not
// returned (it is slow, or under way as the context ended).
const holdLabel = "hold"

// reclaimLabel is Shutdown's label for a reclaim under way, which the
// retiring goroutine waits for: it may give calls back, and no Drain,
// Unregister or Close runs beside a Recycle.
const reclaimLabel = "reclaim under way"

// retire runs after the first Shutdown (and again after a reclaim that
// ended while it was stopped): it cancels, waits for quiescence and for
// the lookups in flight, drains, unbinds and releases the hold, or stops
// when that can never be done safely.
//
// It owns the flag b.retiring: every way out clears it in the same
// critical section that decided to leave, so no reclaim can read it set
// after the goroutine has decided to stop (the gap in which a give-back
// would find nobody to go on).
func (b *Backend) retire() {
	b.mu.Lock()
	var cancels []*call
	for a := range b.open {
		cancels = append(cancels, a.cancelLocked(0)...)
	}
	b.mu.Unlock()
	b.cancelCalls(cancels)

	b.mu.Lock()
	for len(b.open) > 0 || b.lookupsIn > 0 || b.reclaim.pending > 0 {
		if b.finalLocked() {
			// Every attempt left holds an unprovable call and no reclaim
			// is under way: none will quiesce, so the regions stay
			// registered until a reclaim starts this goroutine again.
			b.retiring = false
			b.mu.Unlock()
			if b.retireStopped != nil {
				b.retireStopped()
			}
			return
		}
		changed := b.changedLocked()
		b.mu.Unlock()
		<-changed
		b.mu.Lock()
	}
	b.handingBack = true // no lookup or reclaim starts from now on
	v := b.violation
	b.mu.Unlock()
	if v != nil {
		b.giveUp("the driver broke the protocol (" + v.Rule + "); its answers prove nothing")
		return
	}
	if !b.drain() || !b.unbind() {
		return
	}
	b.mu.Lock()
	b.released = true
	b.retiring = false
	close(b.closed)
	b.broadcastLocked()
	b.mu.Unlock()
}

// drain asks the driver to drain until it answers true.
func (b *Backend) drain() bool {
	pause := firstRetry
	for try := 0; ; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), retireTry)
		ok, panicked := drainOnce(ctx, b)
		cancel()
		switch {
		case panicked != nil:
			b.giveUp(fmt.Sprintf("Drain panicked: %v", panicked))
			return false
		case ok:
			return true
		case try == 0:
			b.log.Warn("kvshare/binding: driver did not drain after every attempt quiesced; retrying")
		}
		time.Sleep(pause)
		pause = min(2*pause, lastRetry)
	}
}

func drainOnce(ctx context.Context, b *Backend) (ok bool, panicked any) {
	defer func() { panicked = recover() }()
	return b.drv.Drain(ctx), nil
}

// unbind unregisters every region, retrying refusals, until the hold is
// released.
func (b *Backend) unbind() bool {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), retireTry)
		err := b.regions.unbind(ctx)
		cancel()
		switch {
		case err == nil:
			return true
		case errors.Is(err, ErrRegistrationMayBeLive):
			b.giveUp(err.Error())
			return false
		}
		b.log.Warn("kvshare/binding: regions still registered; retrying", "err", err)
	}
}

// giveUp records that the binding will never release the hold; the
// retiring goroutine, which calls it, stops.
func (b *Backend) giveUp(reason string) {
	b.mu.Lock()
	b.stuck = reason
	b.retiring = false
	b.broadcastLocked()
	b.mu.Unlock()
	b.log.Error("kvshare/binding: the lender's hold is kept for good", "reason", reason)
}
