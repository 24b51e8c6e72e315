package lender

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
)

// ErrKept is matched by every [*Kept].
var ErrKept = errors.New("lender: memory kept for good")

// Kept is what a [Lender] kept for good — memory that stays mapped for
// the life of the process because no store's access to it can be proven
// ended — and why. Close and a failed Lend or Open return it; it
// matches [ErrKept] and its Why.
type Kept struct {
	// Held names what is held: "attempt 3 (fetch)", "region 0", "hold".
	Held []string
	// RowsLent and BytesLent are the rows and slot bytes still lent
	// (0 when no backend was built).
	RowsLent, BytesLent int64
	// Mapped is the bytes that stay mapped.
	Mapped int64
	// Why is what made it so: binding's *HeldError matching
	// binding.ErrHeldForGood, or the registration that may be live.
	Why error
}

// Error says how much stays mapped, what is held and why.
func (k *Kept) Error() string {
	return fmt.Sprintf("lender: %d bytes kept mapped for good (held: %s; %d rows, %d bytes lent): %v",
		k.Mapped, strings.Join(k.Held, ", "), k.RowsLent, k.BytesLent, k.Why)
}

// Unwrap returns ErrKept and Why.
func (k *Kept) Unwrap() []error { return []error{ErrKept, k.Why} }

// Close gives back everything it can, within ctx: it closes the backend
// (which drains and closes the driver), and when calls are held as
// unprovable and the driver can recycle, reclaims them and closes
// again; then it frees the memory. It returns nil once everything is
// given back; a [*Kept] when something never can be, the memory then
// staying mapped for good (the same *Kept from every later Close); or
// an error wrapping ctx's error (a *binding.HeldError) when time ran out
// first: call Close again later. After nil, Close does nothing and
// returns nil.
func (l *Lender) Close(ctx context.Context) error {
	l.mu.Lock()
	kept, done := l.kept, l.done
	l.mu.Unlock()
	switch {
	case kept != nil:
		return kept
	case done:
		return nil
	}
	err := l.Backend.Close(ctx)
	for errors.Is(err, binding.ErrHeldForGood) && l.Stats().CallsUnprovable > 0 {
		got, rerr := l.Reclaim(ctx)
		if rerr != nil && !errors.Is(rerr, contract.ErrRecycledClosed) {
			if !errors.Is(rerr, binding.ErrNotRecyclable) {
				return fmt.Errorf("lender: reclaiming the calls held as unprovable: %w (%w)", rerr, err)
			}
			break // nothing can reclaim them: kept
		}
		err = l.Backend.Close(ctx)
		if got.Calls == 0 {
			break
		}
	}
	if errors.Is(err, binding.ErrHeldForGood) {
		return l.keep(err)
	}
	if !l.hold.Released() {
		return err // time ran out: a *binding.HeldError wrapping ctx's error
	}
	if ferr := l.mem.Free(); ferr != nil {
		return errors.Join(err, fmt.Errorf("lender: %w", ferr))
	}
	if err == nil {
		l.mu.Lock()
		l.done = true
		l.mu.Unlock()
	}
	return err // nil, or the driver not closed yet: Close again closes it
}

// keep marks the hold kept for good with why, and records the Kept.
func (l *Lender) keep(why error) *Kept {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.kept != nil {
		return l.kept
	}
	l.hold.KeepForGood(why)
	k := &Kept{Mapped: l.mem.Report().Bytes, Why: why}
	var held *binding.HeldError
	if errors.As(why, &held) {
		k.Held, k.RowsLent, k.BytesLent = held.Held, held.RowsLent, held.BytesLent
	}
	l.kept = k
	return k
}
