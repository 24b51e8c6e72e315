package conformance

import (
	"context"

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

// recycleCatches: a Recycle that leaves transfers running, and one that
// does nothing and says it did.
func recycleCatches() []catch {
	control := memHarness(memdrv.Options{}, false)
	left := deviantHarness(func(d *memdrv.Driver) contract.Driver { return straysLeft{d} }, memdrv.Options{})
	atOnce := deviantHarness(func(d *memdrv.Driver) contract.Driver { return recycleAtOnce{d} }, memdrv.Options{})
	return []catch{
		{name: "recycle-leaves-transfers", deviant: left, control: control, check: "recycle-ends-unprovable", violation: "changed after the operation's access ended"},
		{name: "recycle-does-nothing/unprovable", deviant: atOnce, control: control, check: "recycle-ends-unprovable", violation: "every such operation ends Ended"},
		{name: "recycle-does-nothing/held", deviant: atOnce, control: control, check: "recycle-waits-for-rows/put", violation: "Recycle returned nil while a row was held inside the store past its context"},
	}
}
