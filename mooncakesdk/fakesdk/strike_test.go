package fakesdk

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// A fault strikes exactly Times matching calls, and every one when Times
// is 0.
func TestAFaultStrikesItsTimes(t *testing.T) {
	for _, times := range []int{0, 1, 2} {
		s := New(Options{})
		r := s.Client()
		require.NoError(t, s.Script(Fault{Op: Remove, Code: mooncakesdk.ObjectHasLease, Times: times}))
		struck := 0
		for range 4 {
			_, _ = s.Seed("k", []byte("object"))
			var ce *mooncakesdk.CallError
			if err := r.Remove("k", false); errors.As(err, &ce) && ce.Code == mooncakesdk.ObjectHasLease {
				struck++
			}
		}
		want := times
		if times == 0 {
			want = 4
		}
		assert.Equal(t, want, struck, "Times %d", times)
	}
}

// Regions that touch without overlapping are both registered, in either
// order; one that overlaps by a byte is refused.
func TestAdjacentRegionsRegister(t *testing.T) {
	s := newSlab(t, 4, slot)
	c := New(Options{}).Client()
	require.NoError(t, c.RegisterBuffer(s.addr(1), slot))
	assert.NoError(t, c.RegisterBuffer(s.addr(2), slot), "right after")
	assert.NoError(t, c.RegisterBuffer(s.addr(0), slot), "right before")
	var ce *mooncakesdk.CallError
	require.ErrorAs(t, c.RegisterBuffer(s.addr(3)-1, 2), &ce, "one byte over")
	assert.Equal(t, mooncakesdk.InvalidParams, ce.Code)
}
