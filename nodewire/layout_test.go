package nodewire

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStride(t *testing.T) {
	tests := []struct {
		slotBytes int64
		slotCount int
		want      int64
	}{
		{1, 1, 4096},
		{4096, 1, 4096},
		{4097, 1, 8192},
		{65536, 16, 1 << 20},
		{100, 41, 8192}, // 4100 bytes
		{3, 1365, 4096}, // 4095 bytes
		{(math.MaxInt64 - 4095) / 2, 2, math.MaxInt64 - 4095},
	}
	for _, tt := range tests {
		got, err := Stride(tt.slotBytes, tt.slotCount)
		assert.NoError(t, err, "%d × %d", tt.slotBytes, tt.slotCount)
		assert.Equal(t, tt.want, got, "%d × %d", tt.slotBytes, tt.slotCount)
		assert.Zero(t, got%PageSize)
	}
}

func TestStrideBad(t *testing.T) {
	tests := []struct {
		slotBytes int64
		slotCount int
		error     string
	}{
		{0, 1, "nodewire: lend: slot_bytes: 0, want > 0"},
		{-4096, 1, "nodewire: lend: slot_bytes: -4096, want > 0"},
		{4096, 0, "nodewire: lend: slot_count: 0, want > 0"},
		{4096, -1, "nodewire: lend: slot_count: -1, want > 0"},
		{math.MaxInt64, 2, "nodewire: lend: slot_bytes: 9223372036854775807 × 2 slots overflows"},
		{math.MaxInt64 - 4094, 1, "nodewire: lend: slot_bytes: 9223372036854771713 × 1 slots overflows"}, // rounding up overflows
		{1 << 32, 1 << 31, "nodewire: lend: slot_bytes: 4294967296 × 2147483648 slots overflows"},
	}
	for _, tt := range tests {
		_, err := Stride(tt.slotBytes, tt.slotCount)
		assert.EqualError(t, err, tt.error)
		assert.ErrorIs(t, err, ErrBadLend)
	}
}

func TestLendSize(t *testing.T) {
	n, err := LendSize(65536, 16, 4)
	assert.NoError(t, err)
	assert.Equal(t, int64(4<<20), n)
	n, err = LendSize(100, 41, 3)
	assert.NoError(t, err)
	assert.Equal(t, int64(3*8192), n)

	bad := []struct {
		slotBytes          int64
		slotCount, regions int
		error              string
	}{
		{4096, 1, 0, "nodewire: lend: regions: 0, want > 0"},
		{0, 1, 1, "nodewire: lend: slot_bytes: 0, want > 0"},
		{1 << 40, 1 << 20, 1 << 10, "nodewire: lend: regions: 1024 regions of 1152921504606846976 bytes overflows"},
	}
	for _, tt := range bad {
		_, err := LendSize(tt.slotBytes, tt.slotCount, tt.regions)
		assert.EqualError(t, err, tt.error)
		assert.ErrorIs(t, err, ErrBadLend)
	}
}
