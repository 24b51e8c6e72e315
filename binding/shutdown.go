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

// Shutdown stops taking submissions (later ones get an error wrapping
// contract.ErrSubmissionRejected), forces the outcome of every attempt
// whose outcome is not known (fault: [ErrOutcomeForced]; calls not yet
// handed over end Cancelled), calls Wake, and waits within ctx.
//
// On its first call it starts one goroutine that asks the driver to
// cancel what it still holds for those attempts, waits for every attempt
// to quiesce, drains the driver, unregisters every region (a refusal is
// retried, never skipped) and then releases the lender's hold and closes
// [Backend.Closed].
//
// Shutdown returns nil once the hold is released. It returns the labels
// of what is still held when ctx ends first, or at once when what is left
// can never change (every attempt not quiesced holds an unprovable call,
// or the hold can never be released): "attempt <id> (fetch|publish)" for
// each attempt not quiesced, in submission order, then "region <index>"
// for each region still registered, or, when nothing else is left but
// the hold's Release has not returned, "hold". Shutdown itself never
// calls the driver. Calling it again waits again.
//
// The owner's cleanup order: Shutdown returns no labels, so the binding
// has released the hold; then whoever opened the driver closes it, last.
func (b *Backend) Shutdown(ctx context.Context) []string {
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
			return nil
		}
		final := b.finalLocked()
		changed := b.changedLocked()
		b.mu.Unlock()
		if final {
			return b.held()
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return b.held()
		}
	}
}

// finalLocked reports whether what is held can never change: attempts
// remain and each holds an unprovable call (so none will quiesce and the
// regions stay registered), or none remains and the retiring goroutine
// gave up.
func (b *Backend) finalLocked() bool {
	for a := range b.open {
		if a.unprovable == 0 {
			return false
		}
	}
	return len(b.open) > 0 || b.stuck != ""
}

// held returns the labels of what is still held: attempts not quiesced,
// regions not confirmed unregistered, and "hold" when nothing else is
// left but the lender's hold, whose Release has not returned yet.
func (b *Backend) held() []string {
	b.mu.Lock()
	open := make([]*attempt, 0, len(b.open))
	for a := range b.open {
		open = append(open, a)
	}
	released := b.released
	b.mu.Unlock()
	slices.SortFunc(open, func(x, y *attempt) int { return cmp.Compare(x.id, y.id) })
	var labels []string
	for _, a := range open {
		labels = append(labels, a.String())
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

// retire runs after the first Shutdown (and again after a Reclaim that
// gave back what had stopped it): it cancels, waits for quiescence,
// drains, unbinds and releases the hold, or stops when that can never be
// done safely.
func (b *Backend) retire() {
	defer func() {
		b.mu.Lock()
		b.retiring = false
		b.mu.Unlock()
	}()
	b.mu.Lock()
	var cancels []*call
	for a := range b.open {
		cancels = append(cancels, a.cancelLocked(0)...)
	}
	b.mu.Unlock()
	b.cancelCalls(cancels)

	for {
		b.mu.Lock()
		if len(b.open) == 0 {
			b.mu.Unlock()
			break
		}
		if b.finalLocked() {
			// Every attempt left holds an unprovable call: none will
			// ever quiesce, so the regions stay registered for good.
			b.mu.Unlock()
			return
		}
		changed := b.changedLocked()
		b.mu.Unlock()
		<-changed
	}
	b.mu.Lock()
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

// giveUp records that the binding will never release the hold.
func (b *Backend) giveUp(reason string) {
	b.mu.Lock()
	b.stuck = reason
	b.broadcastLocked()
	b.mu.Unlock()
	b.log.Error("kvshare/binding: the lender's hold is kept for good", "reason", reason)
}
