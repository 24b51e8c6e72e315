package conformance

import (
	"context"
	"sync"
	"time"
	"unsafe"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/patience"
)

// Deviations that show well after what triggered them, usually after
// the check that staged them ended: only a thorough run, which waits out
// Wait before it looks a last time, catches them every time.

// lateBy is how long after the trigger the late deviants act: far longer
// than a check takes, far shorter than selfWait as the suite scales it
// (KVSHARE_WAIT_SCALE), so that a thorough run's last look, a scaled
// Wait after the last access end, always comes after it.
var lateBy = patience.Scaled(selfWait) / 6

// lateCallbacks calls every onChange it was given once more, lateBy
// after each Drain that returned true.
type lateCallbacks struct {
	*memdrv.Driver
	mu  *sync.Mutex
	cbs *[]func()
}

func (d lateCallbacks) keep(onChange func()) func() {
	d.mu.Lock()
	*d.cbs = append(*d.cbs, onChange)
	d.mu.Unlock()
	return onChange
}

func (d lateCallbacks) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	return d.Driver.Put(b, d.keep(onChange))
}

func (d lateCallbacks) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	return d.Driver.Get(b, h, d.keep(onChange))
}

func (d lateCallbacks) Drain(ctx context.Context) bool {
	ok := d.Driver.Drain(ctx)
	if ok {
		d.mu.Lock()
		cbs := append([]func(){}, *d.cbs...)
		d.mu.Unlock()
		time.AfterFunc(lateBy, func() {
			for _, f := range cbs {
				f()
			}
		})
	}
	return ok
}

// lateWrites hands out gets that, lateBy after a Poll first reported
// their access Ended, write what their spans held then into them once
// more. It writes into memory the suite lent, even after the region was
// unregistered: only a thorough run, which keeps that memory mapped
// until Wait has passed since the last access end, may stage it.
type lateWrites struct{ *memdrv.Driver }

func (d lateWrites) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	op, err := d.Driver.Get(b, h, onChange)
	if err != nil {
		return nil, err
	}
	return &lateWrite{Operation: op, rows: b.Rows}, nil
}

type lateWrite struct {
	contract.Operation
	rows []contract.Row
	once sync.Once
}

func (o *lateWrite) Poll(dst []contract.RowStatus) contract.OpState {
	st := o.Operation.Poll(dst)
	if st.Access == contract.Ended {
		o.once.Do(func() {
			var spans [][]byte
			var data [][]byte
			for i, r := range o.rows {
				if st.Rows[i] != contract.Ready {
					continue
				}
				for _, s := range r.Spans {
					mem := at(s)
					spans = append(spans, mem)
					data = append(data, append([]byte(nil), mem...))
				}
			}
			time.AfterFunc(lateBy, func() {
				for i, mem := range spans {
					copy(mem, data[i])
				}
			})
		})
	}
	return st
}

// lateCatches: late callbacks and late writes, caught at the end of a
// thorough run.
func lateCatches() []catch {
	control := memHarness(memdrv.Options{}, false)
	return []catch{
		{
			name: "late-callbacks",
			deviant: deviantHarness(func(d *memdrv.Driver) contract.Driver {
				return lateCallbacks{d, new(sync.Mutex), new([]func())}
			}, memdrv.Options{}),
			control: control, check: "no-callback-after-drain/put",
			violation: "after Drain returned true: no callback follows a Drain that returned true",
		},
		{
			name:    "late-writes",
			deviant: deviantHarness(func(d *memdrv.Driver) contract.Driver { return lateWrites{d} }, memdrv.Options{}),
			control: control, check: "get-round-trip",
			violation: "slot 1 of region r1 changed after the operation's access ended",
		},
	}
}

// at views the memory of a span the suite mapped (outside the Go heap)
// by its address.
func at(s contract.Span) []byte {
	addr := s.Addr
	p := *(*unsafe.Pointer)(unsafe.Pointer(&addr))
	return unsafe.Slice((*byte)(p), s.Len)
}
