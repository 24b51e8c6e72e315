package roundtrip

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/tools/internal/poolfloor"
	"github.com/kvshare/kvshare/tools/internal/runprefix"
)

// floorStop bounds the wait for the floor's goroutines at close: every
// submission was waited for, so it only ends a run whose SDK hung.
const floorStop = 30 * time.Second

// floorRig is the floor's stage, which also warms the pool: a client of
// the pool of its own, a region of as many slots as the job's (mapped as
// the lenders' are, registered with the client) and the raw loop on it.
type floorRig struct {
	shape  poolfloor.Shape
	prefix string
	stem   keys.Stem
	client mooncakesdk.Client
	mem    *hostmem.Memory
	addrs  []uintptr
	loop   *poolfloor.Loop
	warm   int64 // bytes to put and remove before measuring (0: none)
	round  int   // rounds made, warming ones included
	open   bool  // until close is called (once)
}

// openFloor opens the floor's stage over the pool: the job's shape
// (cfg's rows and views, the file's call caps and workers), a prefix of
// its own, a client, the region filled and registered, the loop.
func (m *Mooncake) openFloor(ctx context.Context, cfg Config) (*floorRig, error) {
	r := &floorRig{shape: m.floorShape(cfg), warm: m.warm}
	if err := r.shape.Validate(); err != nil {
		return nil, err
	}
	var err error
	if r.prefix, err = runprefix.New(cfg.KeyPrefix, "floor"); err != nil {
		return nil, fmt.Errorf("roundtrip: the floor: %w", err)
	}
	if r.stem, err = keys.NewStem(r.prefix); err != nil {
		return nil, fmt.Errorf("roundtrip: the floor: %w", err)
	}
	if r.mem, err = hostmem.Map(hostmem.Geometry{SlotBytes: cfg.RowBytes, SlotCount: cfg.Rows}, hostmem.Options{Lock: true, HugePages: hostmem.HugePages2MiB}); err != nil {
		return nil, fmt.Errorf("roundtrip: the floor: %w", err)
	}
	fill(r.mem, cfg.Seed+1)
	if r.client, err = mooncakesdk.Open(ctx, m.cfg, m.logger); err != nil {
		return nil, errors.Join(fmt.Errorf("roundtrip: the floor's client: %w", err), r.mem.Free())
	}
	reg := r.mem.Regions()[0]
	if err := r.client.RegisterBuffer(reg.Base, uint64(reg.Len)); err != nil {
		// Nothing was ever moved with the region: it goes back.
		return nil, errors.Join(fmt.Errorf("roundtrip: the floor's region: %w", err), r.client.Destroy(), r.mem.Free())
	}
	r.addrs = make([]uintptr, cfg.Rows)
	for i := range r.addrs {
		r.addrs[i] = reg.Base + uintptr(int64(i)*cfg.RowBytes)
	}
	r.loop = poolfloor.Start(r.client, r.shape.Workers)
	r.open = true
	return r, nil
}

// floorShape is the floor of cfg's job over the pool: its rows and
// views, the file's call caps and workers (package poolfloor).
func (m *Mooncake) floorShape(cfg Config) poolfloor.Shape {
	return poolfloor.ShapeOf(cfg.Rows, cfg.RowBytes, cfg.ViewRows, m.cfg.Mooncake, m.cfg.Blob)
}

// measure makes one round: every row put, then got back into its slot;
// then what it stored is removed.
func (r *floorRig) measure(ctx context.Context) (FloorRound, error) {
	var fr FloorRound
	names := floorNames(r.round, r.shape.Rows)
	r.round++
	put, err := r.shape.Prepare(contract.PutDir, r.stem, names, r.addrs)
	if err != nil {
		return fr, err
	}
	get, err := r.shape.Prepare(contract.GetDir, r.stem, names, r.addrs)
	if err != nil {
		return fr, err
	}
	for _, x := range []struct {
		s     *poolfloor.Submission
		phase *Phase
	}{{put, &fr.Publish}, {get, &fr.Fetch}} {
		start := time.Now()
		r.loop.Submit(x.s)
		if err := wait(ctx, x.s); err != nil {
			return fr, err
		}
		*x.phase = floorPhase(x.s, r.shape.RowBytes, time.Since(start))
	}
	return fr, r.remove(names)
}

// warmSegment puts rounds of rows until r.warm bytes are stored or the
// pool answers that it is full, then removes them: the pool's segment is
// then touched, and neither the floor nor the job pays the first writes
// into it. It returns the bytes stored.
func (r *floorRig) warmSegment(ctx context.Context) (int64, error) {
	var stored int64
	var all [][]byte
	for stored < r.warm {
		names := floorNames(r.round, r.shape.Rows)
		r.round++
		all = append(all, names...)
		put, err := r.shape.Prepare(contract.PutDir, r.stem, names, r.addrs)
		if err != nil {
			return stored, err
		}
		r.loop.Submit(put)
		if err := wait(ctx, put); err != nil {
			return stored, err
		}
		stored += int64(put.Ready()) * r.shape.RowBytes
		if put.Ready() < put.Rows() {
			break // full
		}
	}
	return stored, r.remove(all)
}

// remove removes the floor's objects stored under names.
func (r *floorRig) remove(names [][]byte) error {
	return poolfloor.Remove(r.client, r.stem, names, r.shape.Workers)
}

// close stops the loop and, once its goroutines have returned (no call
// can touch the region after), unregisters the region, destroys the
// client and frees the memory. Goroutines that do not return within
// floorStop keep the region and the client: nothing is given back that
// a call could still use.
func (r *floorRig) close() error {
	r.open = false
	stopped := make(chan struct{})
	go func() { r.loop.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(floorStop):
		return fmt.Errorf("roundtrip: the floor's calls did not return within %v: its client and memory are kept", floorStop)
	}
	err := r.client.UnregisterBuffer(r.mem.Regions()[0].Base)
	if derr := r.client.Destroy(); derr != nil {
		// The client's engine may still hold the region: it stays.
		return errors.Join(err, fmt.Errorf("roundtrip: the floor's client: %w (its memory is kept)", derr))
	}
	return errors.Join(err, r.mem.Free())
}
