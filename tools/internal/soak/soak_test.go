package soak

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/patience"
)

// tiny is a soak short enough for the ordinary test run.
func tiny() Config {
	c := Defaults()
	c.Duration = 2 * time.Second
	c.Slots, c.RowBytes, c.ViewRows, c.Names = 24, 512, 8, 64
	c.Wait = patience.Wait()
	return c
}

func TestASoakOverTheInMemoryStoreKeepsEveryPromise(t *testing.T) {
	rep, err := Run(context.Background(), tiny())
	require.NoError(t, err)
	t.Log(rep)
	assert.Positive(t, rep.Publishes)
	assert.Positive(t, rep.Fetches)
	assert.Positive(t, rep.RowsChecked, "fetches found published rows and checked them")
	assert.Positive(t, rep.MissesChecked)
	assert.EqualValues(t, 4+rep.Rebinds, rep.ShutdownsChecked, "every backend shut down clean")
	assert.EqualValues(t, 4, rep.MemoryFreed)
	assert.Positive(t, rep.Rows[contract.Ready])
	// The embedded store is bounded: half the names' bytes, never more.
	require.NotNil(t, rep.Store)
	assert.EqualValues(t, 32*512, rep.Store.Capacity)
	assert.LessOrEqual(t, rep.Store.Objects, int64(32))
	assert.LessOrEqual(t, rep.Store.InUse, rep.Store.Capacity)
	assert.Contains(t, rep.String(), "the store evicted")
}

// A store whose gets corrupt a delivered row: the soak must fail and say
// which row.
func TestASoakCatchesACorruptRow(t *testing.T) {
	cfg := tiny()
	cfg.Store = corruptingStore{store: memdrv.NewStore()}
	_, err := Run(context.Background(), cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "differs from what was published")
	assert.Contains(t, err.Error(), "seed 1")
}

func TestConfigRefusals(t *testing.T) {
	for name, edit := range map[string]func(*Config){
		"duration":  func(c *Config) { c.Duration = 0 },
		"lenders":   func(c *Config) { c.Lenders = 0 },
		"slots":     func(c *Config) { c.Slots = 2 },
		"row bytes": func(c *Config) { c.RowBytes = 0 },
		"view rows": func(c *Config) { c.ViewRows = 0 },
		"names":     func(c *Config) { c.Names = 0 },
		"wait":      func(c *Config) { c.Wait = 0 },
	} {
		c := tiny()
		edit(&c)
		_, err := Run(context.Background(), c)
		assert.ErrorContains(t, err, name, name)
	}
}

// corruptingStore opens memdrv drivers that flip the first byte of
// every row a get delivers, keeping the verdict Ready.
type corruptingStore struct{ store *memdrv.Store }

func (corruptingStore) Describe() string { return "a corrupting in-memory store" }
func (corruptingStore) Workers() int     { return 2 }
func (c corruptingStore) OpenDriver(context.Context, string) (contract.Driver, error) {
	d := memdrv.New(c.store, memdrv.Options{Workers: 2})
	d.OnRowEnd(func(e memdrv.RowEnd) contract.RowStatus {
		if e.Dir == memdrv.GetDir && e.Status == contract.Ready {
			b := unsafeSlice(e.Spans[0])
			b[0] ^= 0xff
		}
		return e.Status
	})
	return d, nil
}

// A store that leaves some gets' access unprovable for a while (as a
// provider killed mid-transfer does): with Faults on, the soak checks
// those attempts by their outcome, retires their lenders' regions (kept
// for good, never freed) and goes on with fresh ones; every promise
// still holds.
func TestASoakWithFaultsRetiresTheRegionsItCannotProve(t *testing.T) {
	cfg := tiny()
	broken := new(atomic.Bool)
	store := newBreakingStore(broken)
	cfg.Store = store
	cfg.Faults = func(ctx context.Context) {
		select {
		case <-time.After(500 * time.Millisecond): // the scenario: clean at first
		case <-ctx.Done():
			return
		}
		broken.Store(true)
		time.Sleep(300 * time.Millisecond)
		// Broken for at least one get, however slow the machine.
		for store.broke.Load() == 0 && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		broken.Store(false)
	}
	rep, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	t.Log(rep)
	assert.Positive(t, rep.AttemptsUnprovable, "the broken gets left attempts unprovable")
	assert.Positive(t, rep.RegionsKept, "their regions were retired")
	assert.EqualValues(t, cfg.Slots*int(cfg.RowBytes)*int(rep.RegionsKept), rep.BytesKept)
	assert.EqualValues(t, 4, rep.MemoryFreed, "only the regions still lent at the end are freed")
	assert.Positive(t, rep.RowsChecked)
}

// The same store with Reclaim on: each lender wins the memory of its
// unprovable attempts back instead of retiring its region, fences the
// slots, and finds them untouched later, though the store's abandoned
// transfers are let land now and then (those no reclaim tore down yet
// land in memory still held).
func TestASoakWithFaultsAndReclaimKeepsNothing(t *testing.T) {
	cfg := tiny()
	cfg.Reclaim = true
	broken := new(atomic.Bool)
	store := newBreakingStore(broken)
	cfg.Store = store
	landed := new(atomic.Int64)
	cfg.Faults = func(ctx context.Context) {
		for i := 0; ; i++ {
			select {
			case <-time.After(200 * time.Millisecond):
			case <-ctx.Done():
				return
			}
			broken.Store(i%3 == 0)
			landed.Add(int64(store.finish()))
		}
	}
	rep, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	t.Log(rep)
	assert.Positive(t, rep.AttemptsUnprovable, "the broken gets left attempts unprovable")
	assert.Positive(t, rep.Reclaims)
	assert.Positive(t, rep.BytesReclaimed)
	assert.Positive(t, rep.FencesChecked, "the slots given back were fenced and checked")
	assert.Zero(t, rep.RegionsKept, "nothing kept")
	t.Logf("%d abandoned transfers landed before a reclaim tore them down (in memory still held)", landed.Load())
	assert.EqualValues(t, 4, rep.MemoryFreed, "every region freed at the end")
	assert.Contains(t, rep.String(), "reclaims gave")
}

func TestASoakReclaimNeedsFaults(t *testing.T) {
	cfg := tiny()
	cfg.Reclaim = true
	_, err := Run(context.Background(), cfg)
	require.ErrorContains(t, err, "reclaim asks for faults")
}

func TestASoakWithoutFaultsFailsOnAnAttemptThatNeverQuiesces(t *testing.T) {
	cfg := tiny()
	cfg.Wait = time.Second
	broken := new(atomic.Bool)
	broken.Store(true)
	cfg.Store = newBreakingStore(broken)
	_, err := Run(context.Background(), cfg)
	require.Error(t, err, "without Faults an unprovable attempt is a broken promise of the store")
	assert.Contains(t, err.Error(), "did not quiesce")
}

// breakingStore opens memdrv drivers whose gets, while broken is set,
// end with their access unprovable (their transfers running on until
// finish lets them land).
type breakingStore struct {
	store   *memdrv.Store
	broken  *atomic.Bool
	broke   *atomic.Int64 // gets made unprovable
	mu      *sync.Mutex
	drivers *[]*memdrv.Driver
}

func newBreakingStore(broken *atomic.Bool) breakingStore {
	return breakingStore{store: memdrv.NewStore(), broken: broken, broke: new(atomic.Int64), mu: new(sync.Mutex), drivers: new([]*memdrv.Driver)}
}

func (breakingStore) Describe() string { return "a breaking in-memory store" }
func (breakingStore) Workers() int     { return 2 }
func (b breakingStore) OpenDriver(context.Context, string) (contract.Driver, error) {
	d := memdrv.New(b.store, memdrv.Options{Workers: 2})
	b.mu.Lock()
	*b.drivers = append(*b.drivers, d)
	b.mu.Unlock()
	return &breakingDriver{Driver: d, broken: b.broken, broke: b.broke}, nil
}

// finish lets the transfers every driver's store gave up on land, as a
// network that was only slow would: a transfer no recycle tore down
// writes its slot now.
func (b breakingStore) finish() int {
	b.mu.Lock()
	ds := slices.Clone(*b.drivers)
	b.mu.Unlock()
	n := 0
	for _, d := range ds {
		n += d.FinishStrays()
	}
	return n
}

type breakingDriver struct {
	*memdrv.Driver
	broken *atomic.Bool
	broke  *atomic.Int64
}

func (d *breakingDriver) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	if d.broken.Load() {
		keys := make([]string, 0, len(b.Rows))
		for i := range b.Rows {
			keys = append(keys, string(b.AppendKey(nil, i)))
		}
		d.UnprovableGets(keys...)
		d.broke.Add(1)
	}
	return d.Driver.Get(b, h, onChange)
}
