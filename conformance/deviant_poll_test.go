package conformance

import (
	"sync"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// Poll deviations built over memdrv: a Poll that returns its statuses in
// a slice of its own, and one that keeps dst and writes into it later.

// wrappedOps hands out memdrv's operations wrapped by wrap.
type wrappedOps struct {
	*memdrv.Driver
	wrap func(contract.Operation) contract.Operation
}

func (d wrappedOps) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	op, err := d.Driver.Put(b, onChange)
	if err != nil {
		return nil, err
	}
	return d.wrap(op), nil
}

func (d wrappedOps) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	op, err := d.Driver.Get(b, h, onChange)
	if err != nil {
		return nil, err
	}
	return d.wrap(op), nil
}

// opsHarness builds memdrv drivers whose operations wrap wraps.
func opsHarness(wrap func(contract.Operation) contract.Operation) Harness {
	return deviantHarness(func(d *memdrv.Driver) contract.Driver { return wrappedOps{d, wrap} }, memdrv.Options{})
}

// freshRows ignores dst: every Poll allocates a slice of its own.
type freshRows struct{ contract.Operation }

func (o freshRows) Poll([]contract.RowStatus) contract.OpState { return o.Operation.Poll(nil) }

// keptDst keeps the rows it returned in a caller's dst, and flips the
// first of them at the next Poll given a dst: a driver writing into a
// dst it kept. (A Poll given none, as the suite's polls from inside
// onChange are, neither keeps nor flips anything, so the flip always
// comes on the goroutine that owns the dst and the self-test stays free
// of data races.)
type keptDst struct {
	contract.Operation
	mu   sync.Mutex
	prev []contract.RowStatus
}

func (o *keptDst) Poll(dst []contract.RowStatus) contract.OpState {
	if dst == nil {
		return o.Operation.Poll(nil)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.prev) > 0 {
		if o.prev[0] == contract.Fault {
			o.prev[0] = contract.Ready
		} else {
			o.prev[0] = contract.Fault
		}
	}
	st := o.Operation.Poll(dst)
	o.prev = st.Rows
	return st
}

// pollCatches: a Poll that returns its statuses in a slice of its own,
// and one that keeps dst and writes into it later.
func pollCatches() []catch {
	var out []catch
	for _, c := range []struct {
		name      string
		wrap      func(contract.Operation) contract.Operation
		violation string
	}{
		{"fresh-rows", func(op contract.Operation) contract.Operation { return freshRows{op} },
			"Poll returned its 1 statuses in a slice other than the dst it was given, which had room for every row"},
		{"kept-dst", func(op contract.Operation) contract.Operation { return &keptDst{Operation: op} },
			"the snapshot the previous Poll returned changed after it returned (row 0"},
	} {
		for _, check := range []string{"result-count/put", "result-count/get"} {
			out = append(out, catch{
				name: "poll/" + c.name + "/" + check, deviant: opsHarness(c.wrap), control: memHarness(memdrv.Options{}, false),
				check: check, violation: c.violation,
			})
		}
	}
	return out
}
