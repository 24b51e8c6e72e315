package conformance

import (
	"sync/atomic"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// Admission deviations built over memdrv: a driver that refuses nothing,
// and Capabilities that change.

// refusedAsFault admits every batch memdrv refuses, as an operation
// whose rows all end Fault at once: it refuses nothing.
type refusedAsFault struct{ *memdrv.Driver }

func (d refusedAsFault) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	return admitted(b, onChange)(d.Driver.Put(b, onChange))
}

func (d refusedAsFault) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	return admitted(b, onChange)(d.Driver.Get(b, h, onChange))
}

// admitted turns a refusal of b into a faulted operation, reported
// through onChange before it is returned.
func admitted(b contract.RowBatch, onChange func()) func(contract.Operation, error) (contract.Operation, error) {
	return func(op contract.Operation, err error) (contract.Operation, error) {
		if err == nil {
			return op, nil
		}
		onChange()
		return faulted(len(b.Rows)), nil
	}
}

// faulted is an operation of n rows, each Fault, its access Ended.
type faulted int

func (f faulted) Poll(dst []contract.RowStatus) contract.OpState {
	rows := dst[:0]
	for range f {
		rows = append(rows, contract.Fault)
	}
	return contract.OpState{Rows: rows, Access: contract.Ended}
}

func (faulted) Cancel() {}

// admissionCatches: a driver that refuses nothing, and Capabilities that
// change.
func admissionCatches() []catch {
	h := deviantHarness(func(d *memdrv.Driver) contract.Driver { return refusedAsFault{d} }, memdrv.Options{})
	var out []catch
	for _, c := range []struct{ check, why string }{
		{"bad-region", "every registration of the region was refused, so its spans lie in no registration"},
		{"device-memory", "the Device region was refused, so its spans lie in no registration"},
		{"admission", "a span of length 0: a bad batch is refused"},
		{"admission", "no key maker (Keys nil): a bad batch is refused"},
		{"admission", "a name the key maker has no key for: a bad batch is refused"},
		{"extents", "a span straddling the region's base: a span outside every registration is refused"},
		{"duplicate-key", "a name again after another: a batch never carries a name twice"},
		{"duplicate-key", "a name again in a batch of 10 rows: a batch never carries a name twice"},
		{"hints", "the driver does not declare Hints, so a get with a hint is refused"},
		{"unregister-revokes", "its region was unregistered, so the span lies in no registration"},
		{"rejects-after-drain", "Drain stops taking work"},
		{"rejects-after-false-drain", "a Drain stops taking work, whatever it answers"},
	} {
		out = append(out, catch{
			name:    "refuses-nothing/" + c.check + "/" + c.why,
			deviant: h, control: memHarness(memdrv.Options{}, false),
			check: c.check, violation: "admitted, want refused with ErrDriverRejected: " + c.why,
		})
	}
	caps := deviantHarness(func(d *memdrv.Driver) contract.Driver { return unstableCaps{d, new(atomic.Int64)} }, memdrv.Options{})
	return append(out, catch{
		name: "unstable-capabilities", deviant: caps, control: memHarness(memdrv.Options{}, false),
		check: "capabilities-stable", violation: "it must return the same value every time",
	})
}

// unstableCaps declares Hints from the second call of Capabilities on.
type unstableCaps struct {
	*memdrv.Driver
	calls *atomic.Int64
}

func (d unstableCaps) Capabilities() contract.Capabilities {
	c := d.Driver.Capabilities()
	c.Hints = d.calls.Add(1) > 1
	return c
}
