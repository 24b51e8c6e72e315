package binding

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrHeldForGood is matched by a [*HeldError] when what is still held
// can never be given back without tearing the store's client down: a
// call whose access the driver can never prove ended, a driver that broke
// the protocol, or regions the binding can never unregister. The memory
// stays lent and the hold kept. For the first, with a driver that can
// recycle, [Backend.Reclaim] tears the client down and gives the calls
// back; Close then goes on.
var ErrHeldForGood = errors.New("kvshare/binding: held for good")

// HeldError is [Backend.Close]'s answer when something is still held:
// what (Shutdown's labels) and how much memory is still lent. It matches
// [ErrHeldForGood] when nothing more can change, else the context's error
// (errors.Is with context.DeadlineExceeded when time ran out).
type HeldError struct {
	// Held names what is held: "attempt 3 (fetch)", "region 0", "hold".
	Held []string
	// RowsLent and BytesLent are the rows and bytes still lent.
	RowsLent, BytesLent int64
	// Err is ErrHeldForGood or the context's error.
	Err error
}

// Error names what is held, what is lent and why.
func (e *HeldError) Error() string {
	return fmt.Sprintf("kvshare/binding: still held: %s (%d rows, %d bytes lent): %v",
		strings.Join(e.Held, ", "), e.RowsLent, e.BytesLent, e.Err)
}

// Unwrap returns ErrHeldForGood or the context's error.
func (e *HeldError) Unwrap() error { return e.Err }

// Close gives everything back in the owner's order: it stops taking
// submissions and lookups and forces outcomes (Shutdown), waits within
// ctx until every attempt has quiesced, every lookup in flight has
// returned, every region is unregistered and the hold released, and then
// — for a backend made by [Open] — closes the driver. It returns nil once
// all of that is done, or a [*HeldError] saying what is still held:
// matching [ErrHeldForGood] at once when nothing more can change (no
// reclaim is under way that could give a call back), else ctx's error
// when ctx ended first. Memory still lent stays lent; Close never frees
// anything.
//
// Close may be called again after an error: it goes on where it stopped.
// After it returned nil it does nothing and returns nil. Several Closes
// may run at once; each waits within its own context, whatever the
// others wait for. A backend made by [New] does not own its driver:
// Close then does all but close it, which stays its opener's to do.
func (b *Backend) Close(ctx context.Context) error {
	held, why := b.shutdown(ctx)
	if len(held) > 0 {
		b.mu.Lock()
		e := &HeldError{Held: held, RowsLent: b.rowsLent, BytesLent: b.bytesLent, Err: why}
		b.mu.Unlock()
		return e
	}
	if b.owned == nil {
		return nil
	}
	if err := b.owned.close(ctx, false); err != nil {
		return fmt.Errorf("kvshare/binding: everything given back, but the driver is not closed: %w", err)
	}
	return nil
}
