package bench

import (
	"sync/atomic"
	"time"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// epoch is the zero of the benchmark's clock (monotonic).
var epoch = time.Now()

// now is the time since epoch, monotonic.
func now() time.Duration { return time.Since(epoch) }

// probe is a mooncakesdk.Client that notes when the first data call
// (put, get or exists) reaches it after it was armed, for the time from
// submission to the first SDK call. Both sides of a measurement, kvshare
// and its floor, call the store through one, so its few nanoseconds are
// on both sides.
type probe struct {
	mooncakesdk.Client
	first atomic.Int64 // since epoch, ns; 0: none since arm
}

// arm forgets the last first call.
func (p *probe) arm() { p.first.Store(0) }

// firstCall is when the first data call since arm came (since epoch),
// and whether one did.
func (p *probe) firstCall() (time.Duration, bool) {
	f := p.first.Load()
	return time.Duration(f), f != 0
}

func (p *probe) note() {
	if p.first.Load() == 0 {
		p.first.CompareAndSwap(0, int64(now()))
	}
}

func (p *probe) BatchPutFromList(keys *mooncakesdk.KeyList, bufs []uintptr, sizes []uint64, results []int64) error {
	p.note()
	return p.Client.BatchPutFromList(keys, bufs, sizes, results)
}

func (p *probe) BatchGetIntoList(keys *mooncakesdk.KeyList, bufs []uintptr, sizes []uint64, results []int64) error {
	p.note()
	return p.Client.BatchGetIntoList(keys, bufs, sizes, results)
}

func (p *probe) BatchIsExistList(keys *mooncakesdk.KeyList, results []int32) error {
	p.note()
	return p.Client.BatchIsExistList(keys, results)
}
