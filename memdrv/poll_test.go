package memdrv_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// Poll appends the statuses to dst[:0]: it fills the caller's buffer
// when it has room, allocating nothing, and never keeps it.
func TestPollFillsTheCallersBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		op := f.put(f.row(0, "a"), f.row(1, "b"), f.row(2, "c"))
		synctest.Wait()
		want := contract.OpState{Rows: statuses(contract.Ready, contract.Ready, contract.Ready), Access: contract.Ended}

		assert.Equal(t, want, op.Poll(nil), "a nil dst gets a fresh slice")
		dst := []contract.RowStatus{contract.Fault, contract.Fault, contract.Fault, contract.Fault, contract.Fault}
		st := op.Poll(dst)
		assert.Equal(t, want, st, "what dst held is replaced")
		require.Len(t, st.Rows, 3)
		assert.Same(t, &dst[0], &st.Rows[0], "in dst's own array")
		assert.Equal(t, contract.Fault, dst[3], "past the rows, dst is left alone")

		short := make([]contract.RowStatus, 1)
		assert.Equal(t, want, op.Poll(short), "a short dst grows")

		st.Rows[0] = contract.Miss
		assert.Equal(t, want, op.Poll(nil), "the statuses are the caller's: editing them changes no later Poll")

		assert.Zero(t, testing.AllocsPerRun(100, func() { st = op.Poll(dst) }), "no allocation once dst has room")
		f.teardown()
	})
}
