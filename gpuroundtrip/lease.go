package gpuroundtrip

import (
	"context"
	"fmt"
	"sync"
)

// Lease is a lender's staging slots, lent to one lease holder until
// Release. Release only once no store can touch the slots any more: after
// the attempts over them have quiesced.
type Lease struct {
	l    *Lender
	once sync.Once
}

// Lend waits, within ctx, until the lender's staging slots are free and
// lends them. Slots free now are lent even when ctx has ended. Once
// Close has begun it answers [ErrLenderClosed].
func (l *Lender) Lend(ctx context.Context) (*Lease, error) {
	if l.closing.Load() {
		return nil, fmt.Errorf("lender %s: %w", l.name, ErrLenderClosed)
	}
	select {
	case <-l.slots:
		return &Lease{l: l}, nil
	default:
	}
	select {
	case <-l.slots:
		return &Lease{l: l}, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("lender %s: waiting for its staging slots: %w", l.name, context.Cause(ctx))
	}
}

// Release gives the slots back to the lender. It is idempotent.
func (s *Lease) Release() {
	s.once.Do(func() { s.l.slots <- struct{}{} })
}
