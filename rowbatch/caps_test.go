package rowbatch_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/rowbatch"
)

func TestCapsValidate(t *testing.T) {
	good := []rowbatch.Caps{{}, {MaxRows: 1}, {MaxBytes: 1}, {MaxRows: 256, MaxBytes: 128 << 20}}
	for _, c := range good {
		assert.NoError(t, c.Validate(), "%+v", c)
	}

	bad := []struct {
		caps rowbatch.Caps
		want string
	}{
		{rowbatch.Caps{MaxRows: -1}, "MaxRows is -1"},
		{rowbatch.Caps{MaxBytes: -4096}, "MaxBytes is -4096"},
		{rowbatch.Caps{MaxRows: 8, MaxBytes: math.MinInt64}, "MaxBytes is"},
		{rowbatch.Caps{MaxRows: -2, MaxBytes: -2}, "MaxRows is -2"},
	}
	for _, tt := range bad {
		err := tt.caps.Validate()
		require.Error(t, err, "%+v", tt.caps)
		assert.ErrorIs(t, err, rowbatch.ErrBadCaps)
		assert.Contains(t, err.Error(), tt.want)
	}
}

func TestCapsTighter(t *testing.T) {
	tests := []struct {
		a, b, want rowbatch.Caps
	}{
		{rowbatch.Caps{}, rowbatch.Caps{}, rowbatch.Caps{}},
		{rowbatch.Caps{MaxRows: 4}, rowbatch.Caps{}, rowbatch.Caps{MaxRows: 4}},
		{rowbatch.Caps{}, rowbatch.Caps{MaxRows: 4}, rowbatch.Caps{MaxRows: 4}},
		{rowbatch.Caps{MaxRows: 4}, rowbatch.Caps{MaxRows: 9}, rowbatch.Caps{MaxRows: 4}},
		{rowbatch.Caps{MaxRows: 9}, rowbatch.Caps{MaxRows: 4}, rowbatch.Caps{MaxRows: 4}},
		{rowbatch.Caps{MaxBytes: 100}, rowbatch.Caps{MaxRows: 4}, rowbatch.Caps{MaxRows: 4, MaxBytes: 100}},
		{rowbatch.Caps{MaxRows: 4, MaxBytes: 100}, rowbatch.Caps{MaxRows: 8, MaxBytes: 50}, rowbatch.Caps{MaxRows: 4, MaxBytes: 50}},
		{rowbatch.Caps{MaxRows: -3, MaxBytes: -1}, rowbatch.Caps{}, rowbatch.Caps{}},
		{rowbatch.Caps{MaxRows: -3, MaxBytes: 10}, rowbatch.Caps{MaxRows: 5, MaxBytes: -7}, rowbatch.Caps{MaxRows: 5, MaxBytes: 10}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.a.Tighter(tt.b), "%+v.Tighter(%+v)", tt.a, tt.b)
		assert.Equal(t, tt.want, tt.b.Tighter(tt.a), "%+v.Tighter(%+v)", tt.b, tt.a)
	}
}

func TestCapsRowsPerCall(t *testing.T) {
	tests := []struct {
		caps     rowbatch.Caps
		rowBytes int64
		want     int
	}{
		{rowbatch.Caps{}, 100, 0},
		{rowbatch.Caps{MaxRows: 7}, 100, 7},
		{rowbatch.Caps{MaxBytes: 1000}, 100, 10},
		{rowbatch.Caps{MaxBytes: 1099}, 100, 10},
		{rowbatch.Caps{MaxBytes: 99}, 100, 1},
		{rowbatch.Caps{MaxRows: 3, MaxBytes: 1000}, 100, 3},
		{rowbatch.Caps{MaxRows: 30, MaxBytes: 1000}, 100, 10},
		{rowbatch.Caps{MaxBytes: 1000}, 0, 0},
		{rowbatch.Caps{MaxRows: 5, MaxBytes: 1000}, -1, 5},
		{rowbatch.Caps{MaxRows: -5, MaxBytes: -1000}, 100, 0},
		{rowbatch.Caps{MaxBytes: 128 << 20}, 1 << 20, 128},
		{rowbatch.Caps{MaxBytes: math.MaxInt64}, 1, math.MaxInt},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.caps.RowsPerCall(tt.rowBytes), "%+v.RowsPerCall(%d)", tt.caps, tt.rowBytes)
	}
}
