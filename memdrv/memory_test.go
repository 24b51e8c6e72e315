package memdrv_test

import (
	"math"
	"os"
	"testing"

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
