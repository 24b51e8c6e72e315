package bench

import (
	"errors"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/tools/internal/poolfloor"
	"github.com/kvshare/kvshare/tools/internal/runprefix"
)

// poolRig is measurement 5's stage: kvshare (a backend over a Mooncake
// driver that owns the client) and the raw loops (bare goroutines on the
// same client: the same-shape floor's and the large-call floor's), one
// region of slots per row size, lent to kvshare and used by the raw
// loops too (never at the same time).
type poolRig struct {
	o      Options
	target *poolTarget
	kv     *lender
	loop   *poolfloor.Loop // the raw loop (the same-shape floor)
	large  *poolfloor.Loop // the large-call floor's loop (one goroutine)
	stem   keys.Stem
	drv    mooncakedrv.Config // the driver's settings
	raw    mooncakedrv.Config // the raw loop's parts: the driver's, or the backend's caps where tighter
	prefix string
}

// newPoolRig builds the stage over target: the driver (owning the
// client), one region per row size lent to a backend, the raw loop.
func newPoolRig(o Options, target *poolTarget) (*poolRig, error) {
	r := &poolRig{o: o, target: target, drv: target.driverConfig()}
	// The backend's caps, when the config sets them, cut calls before
	// the driver cuts parts: the raw loop's parts take the tighter.
	if b := target.config.Blob; b.RowsPerCall > 0 || b.BytesPerCall > 0 {
		r.raw = rawCaps(r.drv, b)
	} else {
		r.raw = r.drv
	}
	var err error
	if r.prefix, err = runprefix.New(target.config.Blob.KeyPrefix, "bench"); err != nil {
		return nil, errors.Join(err, target.client.Destroy(), target.close())
	}
	if r.stem, err = keys.NewStem(r.prefix); err != nil {
		return nil, errors.Join(err, target.client.Destroy(), target.close())
	}
	drv, err := mooncakedrv.New(target.client, r.drv)
	if err != nil {
		return nil, errors.Join(err, target.client.Destroy(), target.close())
	}
	var mems []*memdrv.Memory
	for _, rs := range o.Pool.RowSizes {
		m, err := memdrv.Alloc(rs, int(o.Pool.Bytes/rs), contract.Host)
		if err != nil {
			for _, m := range mems {
				err = errors.Join(err, m.Free())
			}
			return nil, errors.Join(err, closeIdle(drv), target.close())
		}
		fill(m.Bytes, byte(len(mems)+1))
		mems = append(mems, m)
	}
	r.kv, err = lendMemory(drv, binding.Config{
		KeyPrefix: r.prefix, MaxRowsPerCall: target.config.Blob.RowsPerCall, MaxBytesPerCall: target.config.Blob.BytesPerCall,
	}, observed(o, RealPool), mems...)
	if err != nil {
		if !errors.Is(err, errMemoryKept) {
			for _, m := range mems {
				err = errors.Join(err, m.Free())
			}
		}
		return nil, errors.Join(err, target.close())
	}
	r.loop = poolfloor.Start(target.client, r.drv.Workers)
	r.large = poolfloor.Start(target.client, r.largeGoroutines())
	return r, nil
}

// close stops the raw loops, gives kvshare's lender back (closing the
// driver destroys the client) and stops a pool started for the run.
func (r *poolRig) close() error {
	r.loop.Stop()
	r.large.Stop()
	return errors.Join(r.kv.close(), r.target.close())
}

// names are the names of one side's rows in one round: fresh in every
// round, since a put never overwrites.
func (r *poolRig) names(side byte, round, n int) [][]byte { return roundNames(side, round, n) }

// roundNames are n names of one side in one round.
func roundNames(side byte, round, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = rowName(side, round<<32|i)
	}
	return out
}

// addrs are the addresses of the first n slots of region ri.
func (r *poolRig) addrs(ri, n int, rowBytes int64) []uintptr {
	out := make([]uintptr, n)
	for i := range out {
		out[i] = r.kv.mems[ri].Region.Base + uintptr(int64(i)*rowBytes)
	}
	return out
}

// rawCaps are the driver's part caps, each lowered to the backend's
// call cap where that is tighter.
func rawCaps(drv mooncakedrv.Config, b mooncakesdk.BlobConfig) mooncakedrv.Config {
	if b.RowsPerCall > 0 {
		drv.RowsPerCall = min(drv.RowsPerCall, b.RowsPerCall)
	}
	if b.BytesPerCall > 0 {
		drv.BytesPerCall = min(drv.BytesPerCall, b.BytesPerCall)
	}
	return drv
}

// largeRowsPerCall is the large-call floor's rows a call: the
// store-shaped call that measurement 5's second goal names, the SDK's
// default rows_per_call.
const largeRowsPerCall = 256

// largeCallRows is the large-call floor's rows a call at rowBytes a row:
// largeRowsPerCall, fewer where the pool's bytes_per_call caps a call (one
// larger row alone).
func (r *poolRig) largeCallRows(rowBytes int64) int {
	return poolfloor.Cut(rowBytes, largeRowsPerCall, r.drv.BytesPerCall)
}

// roundtripGoroutines is how many goroutines the roundtrip-shaped case
// submits from: `kvshare roundtrip` submits every view at once from one
// goroutine and fixes no count of requesters, so the case stands for
// several engine requests at once with as many as the driver has
// workers.
func (r *poolRig) roundtripGoroutines() int { return r.drv.Workers }

// largeGoroutines is the large-call floor's goroutines: one, a raw loop
// making one large call after another. Measured both ways on the 2-core
// loopback pool, interleaved, eight repetitions twice: one goroutine
// moved 64 KiB rows about twice as fast as the driver's four workers
// (0.57–0.76 against 0.29–0.41 GB/s) and 256 KiB rows about 1.6 times
// (1.1–1.6 against 0.8–0.9), each way; 1 MiB and 4 MiB rows make one
// call a round either way. One goroutine is what "a raw loop of one call
// per 256 rows" reads as, and the faster floor there, so the goal's
// floor is no easier than it must be; the report names the count.
func (r *poolRig) largeGoroutines() int { return 1 }
