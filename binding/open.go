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
//     the hold and then drains and closes d, all under its own context;
//     until the hold is released, keep the memory.
//
// ctx bounds the cleanup a failed Open does itself (unregistering what
// registered, draining d); never a step left for later.
func Open(ctx context.Context, loan Loan, d contract.Driver, cfg Config) (*Backend, error) {
	if d == nil {
		if loan.Hold != nil {
			loan.Hold.Release()
		}
		return nil, fmt.Errorf("%w: no driver", contract.ErrConstructionRejected)
	}
	owned := newOwnedDriver(d)
	if _, err := cfg.check(); err != nil {
		if loan.Hold != nil {
			loan.Hold.Release()
		}
		return nil, errors.Join(err, owned.close(ctx, true))
	}
	r, err := Bind(d, loan.Regions, loan.Hold)
	if err != nil {
		var live *LiveRegistrationError
		if errors.As(err, &live) {
			live.driver = owned // drained and closed by its Unbind, under Unbind's context
			return nil, err
		}
		return nil, errors.Join(err, owned.close(ctx, true))
	}
	b, err := New(r, cfg)
	if err != nil { // not the config, checked above: regions nobody else can hold
		if uerr := r.Unbind(ctx); uerr != nil {
			return nil, errors.Join(err, uerr)
		}
		return nil, errors.Join(err, owned.close(ctx, true))
	}
	b.owned = owned
	return b, nil
}
