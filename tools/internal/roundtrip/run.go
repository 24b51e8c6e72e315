package roundtrip

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/tools/internal/runprefix"
)

// cleanupTimeout bounds the owner's cleanup after the run.
const cleanupTimeout = 30 * time.Second

// Phase is what one direction moved.
type Phase struct {
	Rows      [contract.RowStatusCount]int64 // rows by final status, from the backend's stats
	Attempts  int
	Delivered int   // rows the outcomes mark delivered
	Bytes     int64 // bytes of delivered rows
	Elapsed   time.Duration
}

// GBps returns the delivered bytes per second, in 10⁹ bytes.
func (p Phase) GBps() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Bytes) / p.Elapsed.Seconds() / 1e9
}

// Lookup is what the fetcher's lookups before the fetch found: the rows
// asked about, those Present, the sum of each view's bound (the rows a
// fetch could rely on), and how long the lookups took. Err is why they
// could not run (a driver without a lookup), or nil.
type Lookup struct {
	Views, Asked, Present, Bound int
	Elapsed                      time.Duration
	Err                          error
}

// Report is what a round trip moved and found.
type Report struct {
	Config Config
	// Store names the store the bytes went through; KeyPrefix is this
	// run's own key prefix (every key is KeyPrefix/v1/<hex name>).
	Store     string
	KeyPrefix string
	Publish   Phase
	Lookup    Lookup
	Fetch     Phase
	// Mismatches counts fetched rows whose bytes differ from what was
	// published; Undelivered rows a phase did not deliver.
	Mismatches  int
	Undelivered int
	// RowsLent and BytesLent are what both backends still had lent once
	// every attempt quiesced (must be zero); Freed says every region went
	// back to its lender through the owner's cleanup order.
	RowsLent  int64
	BytesLent int64
	Freed     bool
	// Memory is what the publisher's staging memory got (package
	// hostmem: locked, huge pages; the fetcher's is mapped alike).
	Memory hostmem.Report
	// Warmed is the bytes put into the pool (then removed) before
	// anything was measured, so that the job does not pay the first
	// writes into a fresh pool's segment ([Mooncake.WarmFirst]); 0 when
	// nothing was.
	Warmed int64
	// Floor is the raw floor measured beside the job (Config.Floor), or
	// nil.
	Floor *Floor
}

// OK reports whether every row arrived intact and nothing stayed lent.
func (r Report) OK() bool {
	return r.Mismatches == 0 && r.Undelivered == 0 && r.RowsLent == 0 && r.BytesLent == 0 && r.Freed
}

// Progress is called as attempts complete: the phase ("publish" or
// "fetch") and the rows done out of all.
type Progress func(phase string, done, total int)

// Run builds two lenders over one store (cfg.Store; when nil, the
// embedded in-memory store, a bounded store that holds the run's rows,
// given back at the end), each with its own driver, publishes cfg.Rows
// blocks from the first under a key prefix of this run's own, fetches
// them into the second, checks every byte, and closes both in the
// owner's cleanup order. An error means the round trip could not run to
// the end; a Report that is not OK means it ran and found something
// wrong.
func Run(ctx context.Context, cfg Config, progress Progress) (Report, error) {
	rep := Report{Config: cfg}
	if err := cfg.Validate(); err != nil {
		return rep, err
	}
	if progress == nil {
		progress = func(string, int, int) {}
	}
	store := cfg.Store
	if store == nil {
		m, err := NewMemoryStore(cfg.Workers, SizedFor(cfg.Rows, cfg.RowBytes))
		if err != nil {
			return rep, err
		}
		defer func() { _ = m.Close() }() // refused only if a driver still touches it: then it stays
		store = m
	}
	rep.Store = store.Describe()
	prefix, err := runprefix.New(cfg.KeyPrefix, "roundtrip")
	if err != nil {
		return rep, fmt.Errorf("roundtrip: %w", err)
	}
	rep.KeyPrefix = prefix
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	fs, ok := store.(floorStore)
	switch {
	case cfg.Floor && !ok:
		return rep, ErrNoFloor
	case !cfg.Floor && (!ok || fs.warmBytes() == 0):
		return rep, job(ctx, cfg, store, prefix, &rep, progress, nil)
	}
	rig, err := fs.openFloor(ctx, cfg)
	if err != nil {
		return rep, err
	}
	if cfg.Floor {
		rep.Floor = &Floor{Shape: rig.shape, KeyPrefix: rig.prefix}
	}
	err = job(ctx, cfg, store, prefix, &rep, progress, rig)
	if rig.open {
		err = errors.Join(err, rig.close())
	}
	return rep, err
}

// beforeJob warms the pool's segment (when the store asks for it) and
// measures the floor's first round (when rep.Floor asks for it); a rig
// there only to warm is closed then, so its client stays out of the job.
func (r *floorRig) beforeJob(ctx context.Context, rep *Report) error {
	var err error
	if rep.Warmed, err = r.warmSegment(ctx); err != nil {
		return err
	}
	if rep.Floor == nil {
		return r.close()
	}
	rep.Floor.Before, err = r.measure(ctx)
	return err
}

// job is the round trip itself: two lenders, the publish, the lookups,
// the fetch, the byte check, the owner's cleanup; it fills in rep. A rig
// (nil: none) warms the pool and measures the floor once the lenders
// are open, so every client of the run exists through every measured
// phase, the job's and the floor's alike.
func job(ctx context.Context, cfg Config, store Store, prefix string, rep *Report, progress Progress, rig *floorRig) error {
	src, err := newLender(ctx, "publisher", store, cfg, prefix)
	if err != nil {
		return err
	}
	dst, err := newLender(ctx, "fetcher", store, cfg, prefix)
	if err != nil {
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer ccancel()
		return errors.Join(err, src.close(cctx))
	}

	rep.Memory = src.mem.Report()
	fill(src.mem, cfg.Seed)
	poison(dst.mem)
	if rig != nil {
		err = rig.beforeJob(ctx, rep)
	}
	views := views(cfg)
	if err == nil {
		err = publishThenFetch(ctx, cfg, src, dst, views, rep, progress)
	}
	if err == nil && rep.Floor != nil {
		rep.Floor.After, err = rig.measure(ctx)
	}
	rep.Undelivered = 2*cfg.Rows - rep.Publish.Delivered - rep.Fetch.Delivered
	for _, l := range []*lender{src, dst} {
		s := l.backend.Stats()
		rep.RowsLent += s.RowsLent
		rep.BytesLent += s.BytesLent
	}
	// Cleanup gets its own bound: even after the run's deadline, attempts
	// cancelled above must quiesce before their memory can go back.
	cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer ccancel()
	cerr := errors.Join(src.close(cctx), dst.close(cctx))
	rep.Freed = cerr == nil
	return errors.Join(err, cerr)
}

// publishThenFetch publishes every view from src, looks every view up
// and fetches it into dst, then compares every byte.
func publishThenFetch(ctx context.Context, cfg Config, src, dst *lender, views []contract.View, rep *Report, progress Progress) error {
	var err error
	rep.Publish, err = move(ctx, "publish", views, cfg.RowBytes, progress, func(v contract.View) (contract.Attempt, error) {
		return src.backend.Publish(v, nil)
	})
	rep.Publish.Rows = src.backend.Stats().Rows
	if err == nil {
		rep.Lookup = lookup(ctx, dst.backend, views)
		rep.Fetch, err = move(ctx, "fetch", views, cfg.RowBytes, progress, func(v contract.View) (contract.Attempt, error) {
			return dst.backend.Fetch(v, nil)
		})
		rep.Fetch.Rows = dst.backend.Stats().Rows
	}
	if err == nil {
		rep.Mismatches = compare(src.mem, dst.mem)
	}
	return err
}

// lookup asks the backend about every view before the fetch, as an
// engine asks before lending memory.
func lookup(ctx context.Context, b *binding.Backend, views []contract.View) Lookup {
	var l Lookup
	start := time.Now()
	for _, v := range views {
		res, err := b.Lookup(ctx, v, binding.LookupOptions{})
		if err != nil {
			l.Err = err
			break
		}
		l.Views++
		l.Bound += res.Bound
		for _, p := range res.Rows {
			if p != contract.Unknown {
				l.Asked++
			}
			if p == contract.Present {
				l.Present++
			}
		}
	}
	l.Elapsed = time.Since(start)
	return l
}

// views cuts the rows into views of cfg.ViewRows rows; a row's name is
// its block hash stand-in: the seed and the row's index.
func views(cfg Config) []contract.View {
	names := make([]byte, 16*cfg.Rows)
	var vs []contract.View
	for start := 0; start < cfg.Rows; start += cfg.ViewRows {
		end := min(start+cfg.ViewRows, cfg.Rows)
		g := contract.Group{Slots: make([]int32, 0, end-start), Names: make([][]byte, 0, end-start)}
		for i := start; i < end; i++ {
			name := names[16*i : 16*i+16 : 16*i+16]
			binary.BigEndian.PutUint64(name, cfg.Seed)
			binary.BigEndian.PutUint64(name[8:], uint64(i))
			g.Slots = append(g.Slots, int32(i))
			g.Names = append(g.Names, name)
		}
		vs = append(vs, contract.View{Groups: []contract.Group{g}})
	}
	return vs
}

// move submits every view at once, as an engine with many requests in
// flight would, and waits for each attempt to quiesce.
func move(ctx context.Context, phase string, views []contract.View, rowBytes int64, progress Progress, submit func(contract.View) (contract.Attempt, error)) (Phase, error) {
	var p Phase
	total := 0
	for _, v := range views {
		total += v.Rows()
	}
	start := time.Now()
	attempts := make([]contract.Attempt, 0, len(views))
	for i, v := range views {
		a, err := submit(v)
		if err != nil {
			return p, fmt.Errorf("%s: view %d: %w", phase, i, err)
		}
		attempts = append(attempts, a)
	}
	p.Attempts = len(attempts)
	done := 0
	for i, a := range attempts {
		select {
		case <-a.Done():
		case <-ctx.Done():
			for _, a := range attempts[i:] {
				a.Cancel()
			}
			return p, fmt.Errorf("%s: attempt %d did not quiesce: %w", phase, i, ctx.Err())
		}
		o, _ := a.Outcome()
		if o.Fault != nil {
			return p, fmt.Errorf("%s: attempt %d: %w", phase, i, o.Fault)
		}
		for _, d := range o.Delivered {
			if d {
				p.Delivered++
			}
		}
		done += len(o.Delivered)
		progress(phase, done, total)
	}
	p.Elapsed = time.Since(start)
	p.Bytes = int64(p.Delivered) * rowBytes
	return p, nil
}

// fill writes reproducible pseudo-random bytes into every slot.
func fill(m *hostmem.Memory, seed uint64) {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	rng := rand.NewChaCha8(key)
	_, _ = rng.Read(slots(m))
}

// slots views every slot of the memory's one region, padding aside.
func slots(m *hostmem.Memory) []byte {
	r := m.Regions()[0]
	return m.Bytes(0)[:r.SlotBytes*int64(r.SlotCount)]
}

// poisonByte fills the fetcher's slots before the fetch.
const poisonByte = 0xA5

// poison fills every slot with poisonByte: a row the fetch never wrote
// cannot pass the byte check by chance, and every page of the fetcher's
// region is touched before the clock starts, as an engine's long-lived
// staging memory would be (the publisher's pages were touched by fill),
// so the fetch rate measures the transfer, not first-touch page faults.
func poison(m *hostmem.Memory) {
	b := slots(m)
	if len(b) == 0 {
		return
	}
	b[0] = poisonByte
	for n := 1; n < len(b); n *= 2 {
		copy(b[n:], b[:n])
	}
}

// compare counts the slots whose bytes differ.
func compare(a, b *hostmem.Memory) int {
	bad := 0
	for i := range a.Regions()[0].SlotCount {
		if !bytes.Equal(a.Slot(0, i), b.Slot(0, i)) {
			bad++
		}
	}
	return bad
}
