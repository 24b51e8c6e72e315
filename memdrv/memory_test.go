package memdrv_test

import (
	"errors"
	"math"
	"os"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

func TestAllocRefusesBadGeometry(t *testing.T) {
	tests := []struct {
		name      string
		slotBytes int64
		slotCount int
		kind      contract.MemoryKind
		want      string
	}{
		{"zero kind", 64, 1, 0, "kind"},
		{"unknown kind", 64, 1, 9, "kind"},
		{"zero slotBytes", 0, 1, contract.Host, "slotBytes is 0"},
		{"negative slotBytes", -1, 1, contract.Host, "slotBytes is -1"},
		{"zero slotCount", 64, 0, contract.Host, "slotCount is 0"},
		{"negative slotCount", 64, -3, contract.Device, "slotCount is -3"},
		{"overflow", math.MaxInt64 / 2, 3, contract.Host, "overflows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := memdrv.Alloc(tt.slotBytes, tt.slotCount, tt.kind)
			require.Error(t, err)
			assert.Nil(t, m)
			assert.ErrorIs(t, err, contract.ErrInvalidRegion)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// Alloc calls a size an overflow only when it is one: the largest size
// that fits an int, rounded up to a page, is asked of the kernel (which
// refuses it) and not refused as bad geometry.
func TestAllocOverflowsOnlyPastTheLargestSize(t *testing.T) {
	page := int64(os.Getpagesize())
	largest := int64(math.MaxInt) - page
	_, err := memdrv.Alloc(largest+1, 1, contract.Host)
	require.ErrorIs(t, err, contract.ErrInvalidRegion)
	assert.Contains(t, err.Error(), "overflows")

	m, err := memdrv.Alloc(largest, 1, contract.Host)
	require.Error(t, err, "no machine maps %d bytes", largest)
	assert.Nil(t, m)
	assert.NotErrorIs(t, err, contract.ErrInvalidRegion)
	assert.Contains(t, err.Error(), "map ")
	assert.NotContains(t, err.Error(), "overflows")
}

func TestAllocLaysOutSlotsOutsideTheHeap(t *testing.T) {
	page := int64(os.Getpagesize())
	tests := []struct {
		name      string
		slotBytes int64
		slotCount int
		kind      contract.MemoryKind
		wantLen   int64
	}{
		{"one small slot", 100, 1, contract.Host, page},
		{"exact pages", page, 3, contract.Host, 3 * page},
		{"rounded up", 1000, 5, contract.Host, 2 * page},
		{"device stand-in", 64, 2, contract.Device, page},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := memdrv.Alloc(tt.slotBytes, tt.slotCount, tt.kind)
			require.NoError(t, err)
			defer func() { require.NoError(t, m.Free()) }()

			r := m.Region
			require.NoError(t, r.Validate())
			assert.Equal(t, tt.kind, r.Kind)
			assert.Equal(t, tt.slotBytes, r.SlotBytes)
			assert.Equal(t, tt.slotCount, r.SlotCount)
			assert.Equal(t, tt.wantLen, r.Len)
			assert.Len(t, m.Bytes, int(r.Len))
			assert.Zero(t, r.Base%uintptr(page), "mapping is page aligned")
			for i := range tt.slotCount {
				s := m.Slot(i)
				assert.Len(t, s, int(tt.slotBytes), "slot %d", i)
				assert.Equal(t, len(s), cap(s), "slot %d capacity ends at the slot", i)
				span := r.Slot(i)
				assert.Equal(t, span.Len, int64(len(s)))
				// Writing through the slot view lands at the span's offset
				// of the whole view.
				s[0], s[len(s)-1] = byte(i+1), byte(i+2)
				off := span.Addr - r.Base
				assert.Equal(t, byte(i+1), m.Bytes[off])
				assert.Equal(t, byte(i+2), m.Bytes[off+uintptr(span.Len)-1])
			}
		})
	}
}

func TestAllocZeroes(t *testing.T) {
	m, err := memdrv.Alloc(4096, 2, contract.Host)
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Free()) }()
	for i, b := range m.Bytes {
		if b != 0 {
			t.Fatalf("byte %d is %#x, want 0", i, b)
		}
	}
}

func TestFreeIsIdempotent(t *testing.T) {
	m, err := memdrv.Alloc(64, 2, contract.Host)
	require.NoError(t, err)
	require.NoError(t, m.Free())
	assert.Nil(t, m.Bytes)
	assert.NoError(t, m.Free())
	assert.Panics(t, func() { m.Slot(0) }, "a freed memory has no slots")
}

func TestSlotOutOfRangePanics(t *testing.T) {
	m := alloc(t, 64, 2, contract.Host)
	for _, i := range []int{-1, 2, 100} {
		assert.Panics(t, func() { m.Slot(i) }, "slot %d", i)
	}
}

// revocation revokes one handle; after it, the memories frees lists are
// lent to no one.
type revocation struct {
	revoke func() error
	frees  []int
}

// A memdrv registration lends the memory: Free refuses it, keeping it
// mapped, until every registration covering any byte of it is revoked.
func TestFreeRefusesLentMemory(t *testing.T) {
	tests := []struct {
		name string
		// lend registers (some of) three memories with d and returns the
		// revocations, in the order they are made.
		lend func(t *testing.T, d *memdrv.TogetherDriver, mems []*memdrv.Memory) []revocation
	}{
		{"one region", func(t *testing.T, d *memdrv.TogetherDriver, mems []*memdrv.Memory) []revocation {
			reg, err := d.Register(mems[0].Region)
			require.NoError(t, err)
			return []revocation{{func() error { return d.Unregister(reg) }, []int{0}}}
		}},
		{"two handles on one region", func(t *testing.T, d *memdrv.TogetherDriver, mems []*memdrv.Memory) []revocation {
			a, err := d.Register(mems[1].Region)
			require.NoError(t, err)
			b, err := d.Register(mems[1].Region)
			require.NoError(t, err)
			return []revocation{
				{func() error { return d.Unregister(a) }, nil},
				{func() error { return d.Unregister(b) }, []int{1}},
			}
		}},
		{"a region inside the mapping", func(t *testing.T, d *memdrv.TogetherDriver, mems []*memdrv.Memory) []revocation {
			r := mems[2].Region
			r.Base += uintptr(r.SlotBytes)
			r.SlotCount, r.Len = 1, r.SlotBytes
			reg, err := d.Register(r)
			require.NoError(t, err)
			return []revocation{{func() error { return d.Unregister(reg) }, []int{2}}}
		}},
		{"a batch of regions", func(t *testing.T, d *memdrv.TogetherDriver, mems []*memdrv.Memory) []revocation {
			reg, err := d.RegisterRegions(specs(mems[0], mems[2]))
			require.NoError(t, err)
			return []revocation{{func() error { return d.UnregisterRegions(reg) }, []int{0, 2}}}
		}},
		{"failed registrations that may be live", func(t *testing.T, d *memdrv.TogetherDriver, mems []*memdrv.Memory) []revocation {
			d.FailNextRegister(&contract.RegistrationError{Registration: 1, Err: errors.New("transport down")})
			_, err := d.Register(mems[0].Region)
			var one *contract.RegistrationError
			require.ErrorAs(t, err, &one)
			d.FailNextRegistration(true)
			_, err = d.RegisterRegions(specs(mems[1]))
			var batch *contract.RegistrationError
			require.ErrorAs(t, err, &batch)
			return []revocation{
				{func() error { return d.Unregister(one.Registration) }, []int{0}},
				{func() error { return d.UnregisterRegions(batch.Registration) }, []int{1}},
			}
		}},
		{"failed registrations that are not live", func(t *testing.T, d *memdrv.TogetherDriver, mems []*memdrv.Memory) []revocation {
			d.FailNextRegister(errors.Join(contract.ErrDriverRejected, errors.New("refused")))
			_, err := d.Register(mems[0].Region)
			require.ErrorIs(t, err, contract.ErrDriverRejected)
			d.FailNextRegistration(false)
			_, err = d.RegisterRegions(specs(mems[1]))
			require.Error(t, err)
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := memdrv.NewTogether(memdrv.NewStore(), memdrv.Options{Logger: quiet})
			mems := []*memdrv.Memory{paint(t, 64, 2, contract.Host), paint(t, 64, 2, contract.Host), paint(t, 64, 2, contract.Host)}
			revocations := tt.lend(t, d, mems)
			lent := map[int]bool{}
			for _, r := range revocations {
				for _, i := range r.frees {
					lent[i] = true
				}
			}
			for i, m := range mems {
				if !lent[i] {
					require.NoError(t, m.Free(), "memory %d is lent to no one", i)
				}
			}
			for n, r := range revocations {
				for i := range lent {
					require.ErrorIs(t, mems[i].Free(), memdrv.ErrMemoryLent, "memory %d before revocation %d", i, n)
					mems[i].Slot(0)[0] = 1 // still mapped
				}
				require.NoError(t, r.revoke(), "revocation %d", n)
				for _, i := range r.frees {
					require.NoError(t, mems[i].Free(), "memory %d after revocation %d", i, n)
					delete(lent, i)
				}
			}
		})
	}
}

// A busy region's Unregister fails, and so the memory stays lent.
func TestFreeRefusesTheMemoryOfABusyRegion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		gate := f.d.Hold(memdrv.PutDir)
		op := f.put(f.row(0, "k"))
		require.NoError(t, gate.Held(t.Context()))
		require.ErrorIs(t, f.d.Unregister(f.reg), memdrv.ErrRegionBusy)
		err := f.mem.Free()
		require.ErrorIs(t, err, memdrv.ErrMemoryLent)
		assert.Contains(t, err.Error(), "1 memdrv registrations still cover it")
		gate.Release()
		synctest.Wait()
		require.Equal(t, contract.Ended, op.Poll(nil).Access)
		f.teardown() // the fixture's cleanup then frees the memory
	})
}

// Free from many goroutines at once unmaps once; every call answers nil.
func TestFreeConcurrently(t *testing.T) {
	m, err := memdrv.Alloc(64, 2, contract.Host)
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = m.Free() })
	}
	wg.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "call %d", i)
	}
	assert.Nil(t, m.Bytes)
}
