package mooncakedrv

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// Objects a raw client stored that are shorter and longer than the row a
// get reads them into: the shorter one lands in the slot's head and
// the rest of the slot is untouched → Fault; the longer one is refused
// with -600 and nothing is written → Fault; an object of the row's size
// beside them is Ready. No answer leaves a transfer running: access
// Ended.
func TestRealObjectsOfTheWrongSize(t *testing.T) {
	s := startRealStore(t, nil)
	raw := openRawClient(t, s)
	r := openRealRig(t, s, 3, slotBytes, "kvshare-realpool/sizes")
	short, long, whole := pattern(0x21, slotBytes-1000), pattern(0x42, slotBytes+1000), pattern(0x63, slotBytes)
	names := []string{"shorter", "longer", "whole"}
	for i, data := range [][]byte{short, long, whole} {
		require.NoError(t, raw.seed(r.key(names[i]), data))
		r.mem.fill(i, byte(0x90+i))
	}

	st := r.get(names, 0, 1, 2)
	assert.Equal(t, []contract.RowStatus{contract.Fault, contract.Fault, contract.Ready}, st.Rows)
	assert.Equal(t, contract.Ended, st.Access)
	assert.Equal(t, short, r.mem.slot(0)[:len(short)], "the shorter object lands in the slot's head")
	assert.Equal(t, pattern(0x90, slotBytes)[len(short):], r.mem.slot(0)[len(short):], "the rest of the slot is untouched")
	assert.Equal(t, pattern(0x91, slotBytes), r.mem.slot(1), "nothing of the longer object is written")
	assert.Equal(t, whole, r.mem.slot(2))
	ds := r.drv.Stats()
	assert.EqualValues(t, 2, ds.GetRows[contract.Fault])
	assert.Zero(t, ds.RowsUnprovable)
}
