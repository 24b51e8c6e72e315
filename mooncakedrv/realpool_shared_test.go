package mooncakedrv

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// Operations queued behind busy workers share SDK calls on a real pool:
// four gets and two puts admitted while the workers are held back go as
// one get call, and one put call with its one exists-check (the store
// file's default, calls_in_flight 1, runs one call a direction at once),
// and every row ends with its own verdict and bytes. A get of a key
// another queued get also reads goes in a call of its own.
func TestRealSharedCalls(t *testing.T) {
	s := startRealStore(t, nil)
	const slotBytes = 64 << 10
	r := openRealRig(t, s, 24, slotBytes, "kvshare-realpool/shared")
	require.Equal(t, 1, r.drv.cfg.CallsInFlight, "a store file's default")

	stored := make([]string, 8)
	for i := range stored {
		stored[i] = fmt.Sprintf("stored-%d", i)
		r.mem.fill(i, byte(10+i))
	}
	st := r.put(stored, span(0, 8)...)
	require.Equal(t, statuses(contract.Ready, 8), st.Rows)
	before := r.drv.Stats()

	type admitted struct {
		op      contract.Operation
		changed <-chan struct{}
		slots   []int
		want    [][]byte // each row's slot once it ended
	}
	var ops []admitted
	resume := r.drv.Pause()
	for i := range 4 { // gets of stored-2i, stored-2i+1 into slots 8+2i, 9+2i
		slots := []int{8 + 2*i, 9 + 2*i}
		for _, sl := range slots {
			clear(r.mem.slot(sl))
		}
		f, ch := notify()
		op, err := r.drv.Get(r.batch(stored[2*i:2*i+2], slots...), nil, f)
		require.NoError(t, err)
		ops = append(ops, admitted{op, ch, slots, [][]byte{pattern(byte(10+2*i), slotBytes), pattern(byte(11+2*i), slotBytes)}})
	}
	for i := range 2 { // puts of fresh names from slots 16+2i, 17+2i
		slots := []int{16 + 2*i, 17 + 2*i}
		for _, sl := range slots {
			r.mem.fill(sl, byte(100+sl))
		}
		f, ch := notify()
		op, err := r.drv.Put(r.batch([]string{fmt.Sprint("fresh-", 2*i), fmt.Sprint("fresh-", 2*i+1)}, slots...), f)
		require.NoError(t, err)
		ops = append(ops, admitted{op, ch, slots, [][]byte{pattern(byte(100+slots[0]), slotBytes), pattern(byte(100+slots[1]), slotBytes)}})
	}
	// A fifth get reads stored-0 again, which the first get reads too.
	f, ch := notify()
	again, err := r.drv.Get(r.batch(stored[:1], 22), nil, f)
	require.NoError(t, err)
	ops = append(ops, admitted{again, ch, []int{22}, [][]byte{pattern(10, slotBytes)}})
	resume()

	for i, a := range ops {
		st := settleWithin(t, a.op, a.changed, realWait)
		assert.Equal(t, statuses(contract.Ready, len(a.slots)), st.Rows, "operation %d", i)
		assert.Equal(t, contract.Ended, st.Access, "operation %d", i)
		for k, sl := range a.slots {
			assert.Equal(t, a.want[k], r.mem.slot(sl), "operation %d row %d", i, k)
		}
	}
	// The puts' objects read back whole.
	for i := range 2 {
		names := []string{fmt.Sprint("fresh-", 2*i), fmt.Sprint("fresh-", 2*i+1)}
		got := r.get(names, 23, 22)
		require.Equal(t, statuses(contract.Ready, 2), got.Rows)
		assert.Equal(t, pattern(byte(100+16+2*i), slotBytes), r.mem.slot(23), "fresh-%d", 2*i)
		assert.Equal(t, pattern(byte(100+17+2*i), slotBytes), r.mem.slot(22), "fresh-%d", 2*i+1)
	}

	after := r.drv.Stats()
	assert.EqualValues(t, 3, after.CallsShared-before.CallsShared, "the four gets' call, the two puts' put-from and their exists-check")
	assert.EqualValues(t, 6, after.PartsShared-before.PartsShared)
	assert.EqualValues(t, 6, after.Calls-before.Calls, "the shared get call, the repeat's own get, the put-from, its exists-check and the two read-backs")
	assert.Zero(t, after.PartsUnprovableShared)
}
