package binding

import (
	"context"
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// ownedDriver is a driver Open was given and must close, last: once, by
// whichever call gets there first (Backend.Close, or the Unbind of a
// LiveRegistrationError), each waiting for its turn within its own
// context and draining, when it drains, under its own context too.
type ownedDriver struct {
	d      contract.Driver
	turn   turn
	closed bool // guarded by turn
}

func newOwnedDriver(d contract.Driver) *ownedDriver {
	return &ownedDriver{d: d, turn: newTurn()}
}

// errNotDrained is close's answer for a driver that did not drain.
var errNotDrained = errors.New("kvshare/binding: the driver did not drain, so it was not closed")

// close closes the driver unless it was closed already. With drain it
// first asks the driver to drain within ctx (a driver whose regions the
// backend never retired); a driver that answers false is not closed.
func (o *ownedDriver) close(ctx context.Context, drain bool) error {
	if err := o.turn.take(ctx); err != nil {
		return fmt.Errorf("kvshare/binding: another call is closing the driver: %w", err)
	}
	defer o.turn.give()
	if o.closed {
		return nil
	}
	if drain && !o.d.Drain(ctx) {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w: %w", errNotDrained, err)
		}
		return errNotDrained
	}
	if err := o.d.Close(); err != nil {
		return fmt.Errorf("kvshare/binding: closing the driver: %w", err)
	}
	o.closed = true
	return nil
}
