package binding

import (
	"context"
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// A Loan is a lender's memory as Open takes it: the regions, and the hold
// they are lent under. The binding releases the hold once no store can
// touch the memory any more; until then the lender keeps it mapped.
type Loan struct {
	Regions []contract.SlotRegion
	Hold    Hold
}

// Open binds the loan's regions to d and builds a backend over them, in
// one call. The backend owns d: [Backend.Close] runs the whole cleanup
// order and closes d last.
//
// On an error nothing of the loan stays lent unless the error says so:
//
//   - A refusal of the config (wrapping [ErrConfig]) or of the
//     construction (wrapping [contract.ErrConstructionRejected]):
//     nothing is registered, the hold is released and d is drained and
//     closed. The lender may free its memory.
//   - A [*LiveRegistrationError]: a registration may be live, so the hold
//     is kept and d stays open. Its Unbind revokes what is held, releases
//     the hold and then closes d; until it succeeds, keep the memory.
//
// ctx bounds the cleanup of a failed Open (unregistering what registered,
// draining d).
func Open(ctx context.Context, loan Loan, d contract.Driver, cfg Config) (*Backend, error) {
	if d == nil {
		if loan.Hold != nil {
			loan.Hold.Release()
		}
		return nil, fmt.Errorf("%w: no driver", contract.ErrConstructionRejected)
	}
	if _, err := cfg.check(); err != nil {
		if loan.Hold != nil {
			loan.Hold.Release()
		}
		return nil, errors.Join(err, closeDriver(ctx, d))
	}
	r, err := Bind(d, loan.Regions, loan.Hold)
	if err != nil {
		var live *LiveRegistrationError
		if errors.As(err, &live) {
			live.then = func() error { return closeDriver(ctx, d) }
			return nil, err
		}
		return nil, errors.Join(err, closeDriver(ctx, d))
	}
	b, err := New(r, cfg)
	if err != nil { // not the config, checked above: regions nobody else can hold
		if uerr := r.Unbind(ctx); uerr != nil {
			return nil, errors.Join(err, uerr)
		}
		return nil, errors.Join(err, closeDriver(ctx, d))
	}
	b.ownsDriver = true
	return b, nil
}

// closeDriver drains d within ctx and closes it.
func closeDriver(ctx context.Context, d contract.Driver) error {
	if !d.Drain(ctx) {
		return errors.New("kvshare/binding: the driver did not drain, so it was not closed")
	}
	if err := d.Close(); err != nil {
		return fmt.Errorf("kvshare/binding: closing the driver: %w", err)
	}
	return nil
}
