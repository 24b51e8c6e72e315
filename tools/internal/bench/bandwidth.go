package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/memdrv"
)

// bandwidthReport is measurement 4: publish and fetch through the
// in-memory store (two copies of every byte: slot → store → slot)
// against the same two copies made with copy by as many goroutines.
type bandwidthReport struct {
	BytesPerRound int64           `json:"bytes_per_round"`
	Workers       int             `json:"workers"`
	ViewRows      int             `json:"view_rows"`
	Cases         []bandwidthCase `json:"cases"`
}

// bandwidthCase is one row size. Rates are 10⁹ bytes per second, one
// figure per repetition: each direction, and the round trip (the bytes
// of one way over the time of both); Ratio is kvshare's round-trip rate
// over the copy floor's.
type bandwidthCase struct {
	RowBytes          int64  `json:"row_bytes"`
	Rows              int    `json:"rows"`
	KvsharePublishGBs spread `json:"kvshare_publish_gbs"`
	KvshareFetchGBs   spread `json:"kvshare_fetch_gbs"`
	KvshareGBs        spread `json:"kvshare_round_trip_gbs"`
	FloorInGBs        spread `json:"floor_copy_in_gbs"`
	FloorOutGBs       spread `json:"floor_copy_out_gbs"`
	FloorGBs          spread `json:"floor_round_trip_gbs"`
	Ratio             spread `json:"ratio"`
	// PublishRatio is kvshare's publish rate over the floor's copy in.
	PublishRatio spread `json:"publish_ratio"`
	// KvshareEvictingGBs is a publish of as many fresh rows into the
	// full store, every put evicting the least recently used object;
	// EvictingRatio its rate over the plain publish's of the same
	// repetition (at least 1/1.2: a put that evicts costs at most 1.2
	// times one that does not).
	KvshareEvictingGBs spread `json:"kvshare_evicting_publish_gbs"`
	EvictingRatio      spread `json:"evicting_ratio"`
	// StorePrefaultMs is how long the bounded store took to fault its
	// memory in, once per case, outside every clock; StorePages what
	// its pages are.
	StorePrefaultMs float64 `json:"store_prefault_ms"`
	StorePages      string  `json:"store_pages"`
}

// roundTrip is what one round of a side took, each way; evict, for
// kvshare, a publish into the full store (every put evicting).
type roundTrip struct{ in, out, evict time.Duration }

func (r roundTrip) total() time.Duration { return r.in + r.out }

// gbs is bytes over d, in 10⁹ bytes per second.
func gbs(bytes int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(bytes) / d.Seconds() / 1e9
}

// measureBandwidth runs measurement 4: per row size and repetition, one
// round through kvshare over a fresh in-memory store and one round of
// plain copies (which goes first changes every repetition), each after
// a collection. Both sides use the same staging memory: rows leave
// slots [0, n) and come back into [n, 2n).
func measureBandwidth(ctx context.Context, o Options, step func(string)) (*bandwidthReport, error) {
	b := o.Bandwidth
	rep := &bandwidthReport{BytesPerRound: b.Bytes, Workers: b.Workers, ViewRows: b.ViewRows}
	for _, rs := range b.RowSizes {
		c, err := measureBandwidthCase(ctx, o, rs, step)
		if err != nil {
			return nil, err
		}
		rep.Cases = append(rep.Cases, c)
	}
	return rep, nil
}

func measureBandwidthCase(ctx context.Context, o Options, rowBytes int64, step func(string)) (bandwidthCase, error) {
	b := o.Bandwidth
	n := int(b.Bytes / rowBytes)
	c := bandwidthCase{RowBytes: rowBytes, Rows: n}
	mem, err := memdrv.Alloc(rowBytes, 2*n, contract.Host)
	if err != nil {
		return c, err
	}
	fill(mem.Bytes, 0x77)
	// The copy floor's "store": memory of the kind kvshare's store
	// takes, mapped outside the Go heap on huge pages where the system
	// has them, faulted in, and touched once.
	floorMem, err := hostmem.Map(hostmem.Geometry{SlotBytes: rowBytes, SlotCount: n}, hostmem.Options{HugePages: hostmem.HugePages2MiB, Prefault: true})
	if err != nil {
		return c, errors.Join(err, mem.Free())
	}
	defer func() { _ = floorMem.Free() }() // never lent: it frees
	store := make([][]byte, n)
	for i := range store {
		store[i] = floorMem.Slot(0, i)
		fill(store[i], 1)
	}
	// kvshare's store is a bounded one that holds the round's rows,
	// taken up front and faulted in once per case, on huge pages where
	// the system has them (as the main job's), and emptied after every
	// round: both sides copy into memory of one kind, already faulted in.
	kvStore, err := memdrv.NewBoundedStore(memdrv.StoreOptions{Capacity: int64(n) * rowBytes, ChunkBytes: chunkFor(rowBytes), HugePages: hostmem.HugePages2MiB})
	if err != nil {
		return c, errors.Join(err, mem.Free())
	}
	defer kvStore.Close() // each round ends with its driver closed: nothing reads or writes it
	c.StorePrefaultMs = float64(kvStore.Prefault()) / float64(time.Millisecond)
	c.StorePages = pagesOf(kvStore.Memory())
	names, fresh := rowNames('w', n), rowNames('e', n)
	pub, fetch, evict := views(names, n, b.ViewRows, 0), views(names, n, b.ViewRows, n), views(fresh, n, b.ViewRows, 0)
	moved := int64(n) * rowBytes
	var kvIn, kvOut, kvAll, kvEvict, flIn, flOut, flAll, ratios, pubRatios, evictRatios []float64
	for r := range o.Reps {
		if err := ctx.Err(); err != nil {
			return c, errors.Join(err, mem.Free())
		}
		step(fmt.Sprintf("4 bandwidth %s", size(rowBytes)))
		var kv, fl roundTrip
		var kerr error
		runKv := func() {
			runtime.GC()
			kv, kerr = kvshareRound(kvStore, mem, b.Workers, pub, fetch, evict, observed(o, Bandwidth))
			kvStore.Clear()
		}
		runFl := func() { runtime.GC(); fl = copyRound(mem, store, b.Workers) }
		inTurn(r, runKv, runFl)
		if kerr != nil {
			if errors.Is(kerr, errMemoryKept) {
				return c, kerr
			}
			return c, errors.Join(kerr, mem.Free())
		}
		kvIn, kvOut, kvAll = append(kvIn, gbs(moved, kv.in)), append(kvOut, gbs(moved, kv.out)), append(kvAll, gbs(moved, kv.total()))
		flIn, flOut, flAll = append(flIn, gbs(moved, fl.in)), append(flOut, gbs(moved, fl.out)), append(flAll, gbs(moved, fl.total()))
		ratios = append(ratios, ratio(float64(fl.total()), float64(kv.total())))
		pubRatios = append(pubRatios, ratio(float64(fl.in), float64(kv.in)))
		kvEvict = append(kvEvict, gbs(moved, kv.evict))
		evictRatios = append(evictRatios, ratio(float64(kv.in), float64(kv.evict)))
	}
	c.KvsharePublishGBs, c.KvshareFetchGBs, c.KvshareGBs = spreadOf(kvIn), spreadOf(kvOut), spreadOf(kvAll)
	c.FloorInGBs, c.FloorOutGBs, c.FloorGBs = spreadOf(flIn), spreadOf(flOut), spreadOf(flAll)
	c.Ratio, c.PublishRatio = spreadOf(ratios), spreadOf(pubRatios)
	c.KvshareEvictingGBs, c.EvictingRatio = spreadOf(kvEvict), spreadOf(evictRatios)
	return c, mem.Free()
}

// kvshareRound publishes every view through a driver over store (empty),
// all at once, waits for them, then fetches every view the same way,
// then publishes the evict views (fresh names) into the full store,
// every put evicting, and gives the driver back.
func kvshareRound(store *memdrv.Store, mem *memdrv.Memory, workers int, pub, fetch, evict []contract.View, obs observation) (roundTrip, error) {
	var rt roundTrip
	drv := memdrv.New(store, memdrv.Options{Workers: workers, Logger: slog.New(slog.DiscardHandler)})
	l, err := lendMemory(drv, binding.Config{KeyPrefix: "bench/bandwidth"}, obs, mem)
	if err != nil {
		return rt, err
	}
	start := time.Now()
	err = submitAll(l, contract.PutDir, pub)
	rt.in = time.Since(start)
	if err == nil {
		start = time.Now()
		err = submitAll(l, contract.GetDir, fetch)
		rt.out = time.Since(start)
	}
	if err == nil {
		before := store.Stats().Evictions
		start = time.Now()
		err = submitAll(l, contract.PutDir, evict)
		rt.evict = time.Since(start)
		if n := int64(len(evict)) * int64(evict[0].Rows()); err == nil && store.Stats().Evictions-before < n {
			err = fmt.Errorf("bench: the evicting publish evicted %d objects for %d rows", store.Stats().Evictions-before, n)
		}
	}
	return rt, errors.Join(err, l.release())
}

// chunkFor is the bounded store's chunk for rows of rowBytes: the
// largest power of two that divides them, at most the store's default.
func chunkFor(rowBytes int64) int64 {
	chunk := int64(memdrv.DefaultChunkBytes)
	for chunk > memdrv.MinChunkBytes && rowBytes%chunk != 0 {
		chunk /= 2
	}
	return chunk
}

// pagesOf says what the store's pages are, in a word or three.
func pagesOf(r hostmem.Report) string {
	switch {
	case r.Advised:
		return "THP advised"
	case r.Locked:
		return r.Pages.String() + ", locked"
	}
	return r.Pages.String()
}

// submitAll submits every view at once in direction dir and waits for
// each to quiesce with every row Ready.
func submitAll(l *lender, dir contract.Direction, vs []contract.View) error {
	attempts := make([]contract.Attempt, 0, len(vs))
	for _, v := range vs {
		var a contract.Attempt
		var err error
		if dir == contract.GetDir {
			a, err = l.backend.Fetch(v, nil)
		} else {
			a, err = l.backend.Publish(v, nil)
		}
		if err != nil {
			return fmt.Errorf("bench: %s: %w", dirName(dir), err)
		}
		attempts = append(attempts, a)
	}
	for i, a := range attempts {
		<-a.Done()
		o, _ := a.Outcome()
		if n := delivered(o); n != vs[i].Rows() {
			return fmt.Errorf("bench: %s view %d: %d of %d rows delivered (fault: %v)", dirName(dir), i, n, vs[i].Rows(), o.Fault)
		}
	}
	return nil
}

// copyRound is the physical limit: the same two copies, slot → store
// and store → slot, with copy, by workers goroutines taking rows in
// turn; the second copy starts once the first is over, as a fetch
// follows a publish.
func copyRound(mem *memdrv.Memory, store [][]byte, workers int) roundTrip {
	n := len(store)
	var rt roundTrip
	for way := range 2 {
		start := time.Now()
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := w; i < n; i += workers {
					if way == 0 {
						copy(store[i], mem.Slot(i))
					} else {
						copy(mem.Slot(n+i), store[i])
					}
				}
			})
		}
		wg.Wait()
		if way == 0 {
			rt.in = time.Since(start)
		} else {
			rt.out = time.Since(start)
		}
	}
	return rt
}

// size prints bytes in binary units.
func size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}
