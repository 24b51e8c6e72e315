package binding

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// ctxDrain is a fake driver whose Drain answers false for a context that
// has ended (as mooncakedrv's does) and, while refusals are left, false
// anyway; it counts its Closes.
type ctxDrain struct {
	*fakeDriver
	refusals atomic.Int32
	closes   atomic.Int32
}

func (d *ctxDrain) Drain(ctx context.Context) bool {
	if ctx.Err() != nil || d.refusals.Add(-1) >= 0 {
		d.event("drain false")
		return false
	}
	return d.fakeDriver.Drain(ctx)
}

func (d *ctxDrain) Close() error {
	d.closes.Add(1)
	d.event("close")
	return nil
}

// openLive opens a backend over d whose registration may be live, under
// a context that has ended by the time Open returned its error.
func openLive(t *testing.T, d *ctxDrain) (*LiveRegistrationError, *countingHold) {
	t.Helper()
	d.failRegistration(1, func() (contract.Registration, error) {
		return 7, &contract.RegistrationError{Registration: 7, Err: errors.New("lost the answer")}
	})
	hold := &countingHold{log: d.fakeDriver}
	ctx, cancel := context.WithCancel(t.Context())
	_, err := Open(ctx, Loan{Regions: []contract.SlotRegion{fakeRegion(0, contract.Host)}, Hold: hold}, d, quietConfig)
	cancel()
	var live *LiveRegistrationError
	require.ErrorAs(t, err, &live)
	require.Zero(t, hold.Released())
	return live, hold
}

// The Unbind of a failed Open's live registration drains and closes the
// driver under its own context, not under Open's, which has ended.
func TestUnbindAfterOpenUsesItsOwnContext(t *testing.T) {
	d := &ctxDrain{fakeDriver: newFake(getPut)}
	live, hold := openLive(t, d)

	require.NoError(t, live.Unbind(t.Context()))
	assert.Equal(t, 1, hold.Released())
	assert.EqualValues(t, 1, d.closes.Load(), "drained under Unbind's context, then closed")
}

// A driver that does not drain within Unbind's context: the error says
// the memory is free again (every registration revoked, the hold
// released) and that the driver is still open; a later Unbind drains and
// closes it.
func TestUnbindSaysTheMemoryIsFreeAndTheDriverOpen(t *testing.T) {
	d := &ctxDrain{fakeDriver: newFake(getPut)}
	d.refusals.Store(1)
	live, hold := openLive(t, d)

	err := live.Unbind(t.Context())
	require.ErrorIs(t, err, ErrDriverOpen)
	assert.NotErrorIs(t, err, ErrRegistrationMayBeLive)
	assert.ErrorContains(t, err, "hold released")
	assert.Equal(t, 1, hold.Released(), "the memory is free again")
	assert.Zero(t, d.closes.Load(), "an undrained driver is not closed")

	require.NoError(t, live.Unbind(t.Context()), "again: it drains and closes the driver")
	assert.EqualValues(t, 1, d.closes.Load())
	assert.Equal(t, 1, hold.Released())
}

// Two Unbinds of one error at once: the hold is released once and the
// driver closed once, and both answer nil.
func TestUnbindAfterOpenTwiceAtOnce(t *testing.T) {
	d := &ctxDrain{fakeDriver: newFake(getPut)}
	live, hold := openLive(t, d)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = live.Unbind(t.Context()) })
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	assert.Equal(t, 1, hold.Released())
	assert.EqualValues(t, 1, d.closes.Load())
}
