package mooncakedrv

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// smallSegment is the provider segment of the pool a test fills: a few
// megabytes, so that filling takes a few dozen puts.
const smallSegment = 16 << 20

// testFullPoolDeclines: on a pool whose only provider's segment is full
// (eviction off) a put answers -200 at once: the rows end Declined,
// their access Ended, nothing is stored under their keys and their slots
// are untouched (the verdict table: -200 → Declined).
func testFullPoolDeclines(t *testing.T, s *realStore, raw *rawClient) {
	r := openRealRig(t, s, 2, slotBytes, "kvshare-realpool/full")
	names := []string{"declined-0", "declined-1"}
	r.mem.fill(0, 1)
	r.mem.fill(1, 2)
	st := r.put(names, 0, 1)
	assert.Equal(t, statuses(contract.Declined, 2), st.Rows)
	assert.Equal(t, contract.Ended, st.Access)
	assert.EqualValues(t, 2, r.drv.Stats().PutRows[contract.Declined])
	assert.Equal(t, pattern(1, slotBytes), r.mem.slot(0), "a put writes no memory")
	assert.Equal(t, pattern(2, slotBytes), r.mem.slot(1), "a put writes no memory")
	for _, name := range names {
		_, ok, err := raw.object(r.key(name), 2*slotBytes)
		require.NoError(t, err)
		assert.False(t, ok, "a declined row stored an object under %q", r.key(name))
	}
}
