package binding

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Backoff between revocation passes: a region the driver calls busy is
// asked again, never skipped.
const (
	firstRetry = time.Millisecond
	lastRetry  = time.Second
)

// Unbind revokes every registration not yet confirmed revoked, then
// releases the hold. A refusal (a busy region, or any error: only a nil
// answer proves the store will never touch the region again) is retried
// with a growing pause until ctx ends; nothing is skipped. It returns nil
// once the hold has been released (at once if it already was), and an
// error wrapping ctx's error naming what is still registered otherwise.
// A registration that left no handle to revoke can never be confirmed:
// Unbind then revokes the rest and fails with [ErrRegistrationMayBeLive],
// and the hold is kept for good.
//
// Unbind on a binding a [Backend] owns is refused with [ErrOwned] and
// asks the driver nothing: the backend unbinds its regions itself after
// Shutdown. Once Unbind was called, [New] refuses the binding, whether
// Unbind succeeded or not. Unbinds from several goroutines take turns;
// one waiting for its turn gives up when its ctx ends, with the same
// error.
func (r *Regions) Unbind(ctx context.Context) error {
	r.mu.Lock()
	if r.owned {
		r.mu.Unlock()
		return fmt.Errorf("%w: shut the backend down instead", ErrOwned)
	}
	r.unbinding = true
	r.mu.Unlock()
	return r.unbind(ctx)
}

// unbind is Unbind without the ownership check: the backend's way.
func (r *Regions) unbind(ctx context.Context) error {
	if err := r.unbindTurn.take(ctx); err != nil {
		what := "every region is unregistered, the hold not yet released"
		if held := r.Held(); len(held) > 0 {
			what = strings.Join(held, ", ") + " still registered"
		}
		return fmt.Errorf("kvshare/binding: %s (another Unbind is under way): %w", what, err)
	}
	defer r.unbindTurn.give()
	pause := firstRetry
	for {
		left, last := r.revokePass()
		if left == 0 {
			if held := r.Held(); len(held) > 0 {
				return fmt.Errorf("%w: %s: no handle to revoke", ErrRegistrationMayBeLive, strings.Join(held, ", "))
			}
			r.releaseHold()
			return nil
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("kvshare/binding: %s still registered (last refusal: %v): %w",
				strings.Join(r.Held(), ", "), last, ctx.Err())
		case <-t.C:
		}
		pause = min(2*pause, lastRetry)
	}
}

// revokePass asks the driver once to revoke each registration that has a
// handle and is not yet revoked, newest first. It returns how many remain
// revocable and the last refusal.
func (r *Regions) revokePass() (left int, last error) {
	r.mu.Lock()
	var todo []*registration
	for _, reg := range r.regs {
		if !reg.revoked && !reg.noHandle {
			todo = append(todo, reg)
		}
	}
	r.mu.Unlock()
	for i := len(todo) - 1; i >= 0; i-- {
		reg := todo[i]
		if err := unregister(r.drv, reg); err != nil {
			left++
			last = errors.Join(last, fmt.Errorf("%s: %w", labelsOf(reg), err))
			continue
		}
		r.mu.Lock()
		reg.revoked = true
		r.mu.Unlock()
	}
	return left, last
}

func labelsOf(reg *registration) string {
	ls := make([]string, len(reg.indices))
	for k, i := range reg.indices {
		ls[k] = regionLabel(i)
	}
	return strings.Join(ls, ", ")
}
