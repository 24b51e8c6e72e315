package conformance

import (
	"context"
	"sync/atomic"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// Recyclers that break a rule of contract.Recycler.

// straysLeft reports every access Ended but tears nothing down: the
// transfers the store gave up on run on, and write once let finish.
type straysLeft struct{ *memdrv.Driver }

func (d straysLeft) Recycle(ctx context.Context) error {
	d.KeepStraysOnRecycle()
	return d.Driver.Recycle(ctx)
}

// recycleAtOnce answers nil without waiting for anything or ending any
// access.
type recycleAtOnce struct{ *memdrv.Driver }

func (recycleAtOnce) Recycle(context.Context) error { return nil }

// endsEarly reports every Unprovable get Ended from the moment a
// Recycle is called, while memdrv's Recycle still waits for the rows
// inside the store and has torn no transfer down: a torn state, the
// end announced before the teardown that makes it true.
type endsEarly struct {
	*memdrv.Driver
	recycling *atomic.Bool
}

func (d endsEarly) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	op, err := d.Driver.Get(b, h, onChange)
	if err != nil {
		return op, err
	}
	return earlyEnd{Operation: op, recycling: d.recycling}, nil
}

func (d endsEarly) Recycle(ctx context.Context) error {
	d.recycling.Store(true)
	return d.Driver.Recycle(ctx)
}

type earlyEnd struct {
	contract.Operation
	recycling *atomic.Bool
}

func (o earlyEnd) Poll(dst []contract.RowStatus) contract.OpState {
	st := o.Operation.Poll(dst)
	if st.Access == contract.Unprovable && o.recycling.Load() {
		st.Access = contract.Ended
	}
	return st
}

// recycleCatches: a Recycle that leaves transfers running, one that
// does nothing and says it did, and one that reports the end before
// its teardown.
func recycleCatches() []catch {
	control := memHarness(memdrv.Options{}, false)
	left := deviantHarness(func(d *memdrv.Driver) contract.Driver { return straysLeft{d} }, memdrv.Options{})
	atOnce := deviantHarness(func(d *memdrv.Driver) contract.Driver { return recycleAtOnce{d} }, memdrv.Options{})
	early := deviantHarness(func(d *memdrv.Driver) contract.Driver { return endsEarly{Driver: d, recycling: new(atomic.Bool)} }, memdrv.Options{})
	return []catch{
		{name: "recycle-leaves-transfers", deviant: left, control: control, check: "recycle-ends-unprovable", violation: "changed after the operation's access ended"},
		{name: "recycle-does-nothing/unprovable", deviant: atOnce, control: control, check: "recycle-ends-unprovable", violation: "every such operation ends Ended"},
		{name: "recycle-does-nothing/held", deviant: atOnce, control: control, check: "recycle-waits-for-rows/put", violation: "Recycle returned nil while a row was held inside the store past its context"},
		{name: "recycle-ends-before-teardown", deviant: early, control: control, check: "recycle-refuses-calls", violation: "changed after the operation's access ended"},
	}
}
