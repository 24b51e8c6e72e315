package mooncakedrv

import (
	"sync"

	"github.com/kvshare/kvshare/contract"
)

// recordedOp is one operation a fault lender's driver admitted: its
// direction, its rows' names and slots, and the operation itself, which
// the matrix polls for the rows' verdicts and its access.
type recordedOp struct {
	dir   contract.Direction
	op    contract.Operation
	names []string
	slots []int
}

// recordingDriver is a fault lender's driver with every operation it
// admits recorded.
type recordingDriver struct {
	*Driver
	base      uintptr
	slotBytes int64

	mu  sync.Mutex
	ops []*recordedOp
}

// Put admits a put and records its operation.
func (d *recordingDriver) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	op, err := d.Driver.Put(b, onChange)
	d.record(contract.PutDir, b, op, err)
	return op, err
}

// Get admits a get and records its operation.
func (d *recordingDriver) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	op, err := d.Driver.Get(b, h, onChange)
	d.record(contract.GetDir, b, op, err)
	return op, err
}

// record keeps an admitted operation with its rows' names and slots.
func (d *recordingDriver) record(dir contract.Direction, b contract.RowBatch, op contract.Operation, err error) {
	if err != nil {
		return
	}
	r := &recordedOp{dir: dir, op: op}
	for _, row := range b.Rows {
		r.names = append(r.names, string(row.Name))
		r.slots = append(r.slots, int((row.Spans[0].Addr-d.base)/uintptr(d.slotBytes)))
	}
	d.mu.Lock()
	d.ops = append(d.ops, r)
	d.mu.Unlock()
}

// recorded returns the operations admitted so far.
func (d *recordingDriver) recorded() []*recordedOp {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]*recordedOp(nil), d.ops...)
}

// forget drops the operations recorded so far.
func (d *recordingDriver) forget() {
	d.mu.Lock()
	d.ops = nil
	d.mu.Unlock()
}
