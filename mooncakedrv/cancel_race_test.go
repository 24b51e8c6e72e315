package mooncakedrv

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

// Two operations of one driver cancelled at once, while their parts wait
// behind a worker held inside the SDK, as a backend cancels the calls of
// two attempts from two workers' callbacks (the fault matrix's traffic
// did): every queued part ends Cancelled, once, and — under -race — one
// Cancel does not read a part the other has just taken out of the queue
// and given back to the part pool (scheduler.Cancel calls its match
// without the pool's lock, over a snapshot of the queue).
func TestConcurrentCancelsOfTwoOperations(t *testing.T) {
	for round := range 50 {
		r := newRig(t, fakesdk.Options{}, Config{Workers: 1, RowsPerCall: 1})
		gate := fakesdk.NewGate()
		require.NoError(t, r.store.Script(fakesdk.Fault{Op: fakesdk.Put, Hold: gate, Times: 1}))
		onChange, changed := notify()
		held, err := r.drv.Put(r.batch([]string{"held"}, 0), onChange)
		require.NoError(t, err)
		<-gate.Reached() // the only worker is inside the SDK

		var ops []contract.Operation
		for o := range 2 {
			names := make([]string, 6)
			slots := make([]int, 6)
			for i := range names {
				names[i], slots[i] = fmt.Sprintf("r%d-o%d-%d", round, o, i), 1+o*6+i
			}
			op, err := r.drv.Put(r.batch(names, slots...), nil)
			require.NoError(t, err)
			ops = append(ops, op)
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for _, op := range ops {
			wg.Go(func() {
				<-start
				op.Cancel()
			})
		}
		close(start)
		wg.Wait()
		for _, op := range ops {
			st := op.Poll(nil)
			assert.Equal(t, statuses(contract.Cancelled, 6), st.Rows, "round %d", round)
			assert.Equal(t, contract.Ended, st.Access, "round %d", round)
		}
		gate.Open()
		assert.Equal(t, []contract.RowStatus{contract.Ready}, settle(t, held, changed).Rows)
		r.close()
	}
}
