package binding

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// lender lends memdrv memory (outside the Go heap) under a hold. At the
// end of the test it frees the memory only if the hold was released:
// memory a store may still touch is never freed.
type lender struct {
	mems     []*memdrv.Memory
	released atomic.Int32
}

const lenderSlotBytes = 256

func newLender(t testing.TB, slots int, kinds ...contract.MemoryKind) *lender {
	t.Helper()
	l := &lender{}
	for _, k := range kinds {
		m, err := memdrv.Alloc(lenderSlotBytes, slots, k)
		require.NoError(t, err)
		l.mems = append(l.mems, m)
	}
	t.Cleanup(func() {
		if l.released.Load() == 0 {
			return // the hold is kept: so is the memory
		}
		for _, m := range l.mems {
			require.NoError(t, m.Free())
		}
	})
	return l
}

// Release is the lender's side of the hold.
func (l *lender) Release() { l.released.Add(1) }

func (l *lender) Released() int { return int(l.released.Load()) }

func (l *lender) Regions() []contract.SlotRegion {
	rs := make([]contract.SlotRegion, len(l.mems))
	for i, m := range l.mems {
		rs[i] = m.Region
	}
	return rs
}

// fill writes a pattern derived from seed into a slot.
func (l *lender) fill(region, slot int, seed byte) {
	b := l.mems[region].Slot(slot)
	for i := range b {
		b[i] = seed + byte(i)
	}
}

// memBackend binds the lender's regions to d and builds a backend.
func memBackend(t testing.TB, d contract.Driver, l *lender, cfg Config) *Backend {
	t.Helper()
	return bindBackend(t, d, l.Regions(), l, "mem", cfg)
}

// memKey is the key memBackend builds for name.
func memKey(t testing.TB, b *Backend, name string) string {
	t.Helper()
	k, err := b.stem.Key([]byte(name))
	require.NoError(t, err)
	return k
}
