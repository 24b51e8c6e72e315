package mooncakedrv

import (
	"context"
	"errors"
	"log/slog"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
	"github.com/kvshare/kvshare/patience"
)

// memory is host memory outside the Go heap, as a lender lends it: an
// anonymous mapping of slots slots of slotBytes each.
type memory struct {
	bytes  []byte
	region contract.SlotRegion
}

func newMemory(t testing.TB, slots int, slotBytes int64) *memory {
	t.Helper()
	b, err := syscall.Mmap(-1, 0, int(slotBytes)*slots, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	m := &memory{bytes: b, region: contract.SlotRegion{
		Base: uintptr(unsafe.Pointer(&b[0])), SlotBytes: slotBytes, SlotCount: slots, Len: slotBytes * int64(slots), Kind: contract.Host,
	}}
	// Unmapped only if the test proved nothing can touch it: a test that
	// leaves access unprovable calls keep.
	t.Cleanup(func() {
		if !t.Failed() {
			_ = syscall.Munmap(b)
		}
	})
	return m
}

func (m *memory) slot(i int) []byte {
	n := int(m.region.SlotBytes)
	return m.bytes[i*n : (i+1)*n]
}

// fill writes a pattern that depends on seed into slot i.
func (m *memory) fill(i int, seed byte) {
	for k := range m.slot(i) {
		m.slot(i)[k] = seed + byte(k*7)
	}
}

// pattern is what fill(i, seed) writes, n bytes of it.
func pattern(seed byte, n int) []byte {
	out := make([]byte, n)
	for k := range out {
		out[k] = seed + byte(k*7)
	}
	return out
}

// rig is a driver over one client of a fake store, with a region of
// host memory registered.
type rig struct {
	t     testing.TB
	store *fakesdk.Store
	drv   *Driver
	mem   *memory
	reg   contract.Registration
	stem  keys.Stem
}

const slotBytes = 4096

func newRig(t testing.TB, opts fakesdk.Options, cfg Config) *rig {
	t.Helper()
	store := fakesdk.New(opts)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	drv, err := New(store.Client(), cfg)
	require.NoError(t, err)
	mem := newMemory(t, 16, slotBytes)
	reg, err := drv.Register(mem.region)
	require.NoError(t, err)
	stem, err := keys.NewStem("t")
	require.NoError(t, err)
	return &rig{t: t, store: store, drv: drv, mem: mem, reg: reg, stem: stem}
}

// batch is a batch of rows named names, row i in slot slots[i].
func (r *rig) batch(names []string, slots ...int) contract.RowBatch {
	b := contract.RowBatch{Keys: r.stem}
	for i, n := range names {
		b.Rows = append(b.Rows, contract.Row{Name: []byte(n), Spans: []contract.Span{r.mem.region.Slot(slots[i])}})
	}
	return b
}

// key is the store key of name.
func (r *rig) key(name string) string {
	k, err := r.stem.Key([]byte(name))
	require.NoError(r.t, err)
	return k
}

// settle waits for op's access to leave Open (through onChange), within
// the test's patience bound, and returns its state.
func settle(t testing.TB, op contract.Operation, changed <-chan struct{}) contract.OpState {
	t.Helper()
	return settleWithin(t, op, changed, patience.Wait())
}

// notify returns an onChange and the channel it signals.
func notify() (func(), <-chan struct{}) {
	ch := make(chan struct{}, 1)
	return func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}, ch
}

// put admits a put of names from slots and waits for it to end.
func (r *rig) put(names []string, slots ...int) contract.OpState {
	r.t.Helper()
	f, ch := notify()
	op, err := r.drv.Put(r.batch(names, slots...), f)
	require.NoError(r.t, err)
	return settle(r.t, op, ch)
}

// get admits a get of names into slots and waits for it to end.
func (r *rig) get(names []string, slots ...int) contract.OpState {
	r.t.Helper()
	f, ch := notify()
	op, err := r.drv.Get(r.batch(names, slots...), nil, f)
	require.NoError(r.t, err)
	return settle(r.t, op, ch)
}

// close drains, unregisters and closes, as a binding would, requiring
// each step to succeed.
func (r *rig) close() {
	r.t.Helper()
	closeDriver(r.t, r.drv, r.reg)
}

// closeDriver drains d, unregisters reg and closes d, as a binding
// would, requiring each step to succeed.
func closeDriver(t testing.TB, d *Driver, reg contract.Registration) {
	t.Helper()
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	require.True(t, d.Drain(ctx))
	require.NoError(t, d.Unregister(reg))
	require.NoError(t, d.Close())
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// goBuffer is memory outside the Go heap for a test's own store calls.
type goBuffer struct{ bytes []byte }

func newGoBuffer(n int) *goBuffer {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		panic(err)
	}
	return &goBuffer{bytes: b}
}

func (b *goBuffer) addr() uintptr { return uintptr(unsafe.Pointer(&b.bytes[0])) }
func (b *goBuffer) free()         { _ = syscall.Munmap(b.bytes) }
