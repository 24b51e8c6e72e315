package drivekit

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/scheduler"
)

// gated is a verdicts store whose calls for a key in gates wait until
// that gate is closed.
type gated struct {
	*verdicts
	gates map[string]chan struct{}
}

func (g *gated) Transfer(c *Call) {
	for _, k := range c.Keys {
		if gate, ok := g.gates[k]; ok {
			<-gate
		}
	}
	g.verdicts.Transfer(c)
}

// rowAt is a batch of one row named name over slot i of rigRegion.
func rowAt(name string, i int) contract.RowBatch {
	return contract.RowBatch{Keys: plainKeys{}, Rows: []contract.Row{{Name: []byte(name), Spans: []contract.Span{rigRegion.Slot(i)}}}}
}

// poolStopped reports whether d's pool refuses a part as stopped.
func poolStopped(d *Driver) bool {
	return d.pool.Submit(scheduler.Get, part{}) != nil
}

// stagePutAndGet makes a paused driver of workers on the gets-first
// pool over v, with a put of "p" and a get of "g" admitted, unstarted.
func stagePutAndGet(t *testing.T, v *verdicts, workers int) (d *Driver, reg contract.Registration, resume func(), put, get contract.Operation) {
	t.Helper()
	d, reg, err := newRigWith(v, Options{Workers: workers, GetsFirst: true})
	require.NoError(t, err)
	resume = d.Pause()
	put, err = d.Put(rowAt("p", 0), nil)
	require.NoError(t, err)
	get, err = d.Get(rowAt("g", 1), nil, nil)
	require.NoError(t, err)
	return d, reg, resume, put, get
}

// With one worker, the gets-first pool lets four gets pass a waiting put
// before the put runs; the FIFO workers run calls as admitted.
func TestGetsPassWaitingPutsOnTheGetsFirstPool(t *testing.T) {
	for _, tt := range []struct {
		getsFirst bool
		want      [][]string
	}{
		{false, [][]string{{"p1"}, {"p2"}, {"g1"}, {"g2"}, {"g3"}, {"g4"}, {"g5"}, {"g6"}}},
		{true, [][]string{{"g1"}, {"g2"}, {"g3"}, {"g4"}, {"p1"}, {"g5"}, {"g6"}, {"p2"}}},
	} {
		synctest.Test(t, func(t *testing.T) {
			v := &verdicts{}
			d, reg, err := newRigWith(v, Options{Workers: 1, GetsFirst: tt.getsFirst})
			require.NoError(t, err)
			resume := d.Pause()
			var ops []contract.Operation
			for i, name := range []string{"p1", "p2"} {
				op, err := d.Put(rowAt(name, i), nil)
				require.NoError(t, err)
				ops = append(ops, op)
			}
			for i, name := range []string{"g1", "g2", "g3", "g4", "g5", "g6"} {
				op, err := d.Get(rowAt(name, i+2), nil, nil)
				require.NoError(t, err)
				ops = append(ops, op)
			}
			synctest.Wait()
			assert.Empty(t, v.callKeys(), "paused: no call starts")
			resume()
			for _, op := range ops {
				assert.Equal(t, contract.Ended, settle(op).Access)
			}
			assert.Equal(t, tt.want, v.callKeys(), "GetsFirst %v", tt.getsFirst)
			teardown(t, d, reg)
		})
	}
}

// With two workers, the gets-first pool runs puts on one worker at
// most: while a put runs and another waits, a get takes the other
// worker. The FIFO workers give it to the waiting put.
func TestAGetNeverWaitsBehindPutsAloneWithTwoWorkers(t *testing.T) {
	for _, getsFirst := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			gate := make(chan struct{})
			g := &gated{verdicts: &verdicts{}, gates: map[string]chan struct{}{"p1": gate, "p2": gate}}
			d, reg, err := newRigWith(g, Options{Workers: 2, GetsFirst: getsFirst})
			require.NoError(t, err)
			p1, err := d.Put(rowAt("p1", 0), nil)
			require.NoError(t, err)
			synctest.Wait() // p1 runs, held at its gate
			p2, err := d.Put(rowAt("p2", 1), nil)
			require.NoError(t, err)
			synctest.Wait()
			get, err := d.Get(rowAt("g1", 2), nil, nil)
			require.NoError(t, err)
			st := settle(get)
			if getsFirst {
				assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Ready}, Access: contract.Ended}, st, "the get ran beside the put")
				running, limit, waiting := d.Workers("p2")
				assert.Equal(t, 1, running, "one worker runs a put")
				assert.Equal(t, 2, limit)
				assert.True(t, waiting, "the second put waits for the first")
			} else {
				assert.Equal(t, contract.Open, st.Access, "the get waits behind two puts")
			}
			close(gate)
			for _, op := range []contract.Operation{p1, p2, get} {
				assert.Equal(t, contract.Ended, settle(op).Access)
			}
			teardown(t, d, reg)
		})
	}
}

// A Drain ends Cancelled the parts queued on the pool, which never reach
// the store, stops the pool, and leaves no goroutine behind (the bubble
// fails on a goroutine left blocked).
func TestDrainStopsTheGetsFirstPool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := &verdicts{}
		d, reg, resume, put, get := stagePutAndGet(t, v, 3)
		running, _, waiting := d.Workers("g")
		assert.Equal(t, 0, running)
		assert.True(t, waiting, "paused: the get waits for a worker")
		require.True(t, d.Drain(context.Background()))
		for _, op := range []contract.Operation{put, get} {
			assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Cancelled}, Access: contract.Ended}, op.Poll(nil))
		}
		assert.True(t, poolStopped(d), "Drain stopped the pool")
		resume()
		synctest.Wait()
		assert.Empty(t, v.callKeys(), "no queued part reached the store")
		require.NoError(t, d.Unregister(reg))
		require.NoError(t, d.Close())
	})
}

// A Drain whose context ends while a call runs answers false and leaves
// the pool to finish it; a later Drain answers true once it has.
func TestADrainCutShortLeavesThePoolToFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		g := &gated{verdicts: &verdicts{}, gates: map[string]chan struct{}{"g": gate}}
		d, reg, err := newRigWith(g, Options{Workers: 2, GetsFirst: true})
		require.NoError(t, err)
		get, err := d.Get(rowAt("g", 0), nil, nil)
		require.NoError(t, err)
		synctest.Wait() // the get is inside the store
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		assert.False(t, d.Drain(ended), "a call still runs")
		assert.Error(t, d.Close(), "no Drain returned true")
		close(gate)
		require.True(t, d.Drain(context.Background()))
		assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Ready}, Access: contract.Ended}, get.Poll(nil))
		assert.True(t, poolStopped(d))
		require.NoError(t, d.Unregister(reg))
		require.NoError(t, d.Close())
	})
}

// A part cancelled while queued on the pool never reaches the store;
// the worker that takes it later skips it.
func TestACancelledPartOnThePoolNeverRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := &verdicts{}
		d, reg, resume, put, get := stagePutAndGet(t, v, 1)
		put.Cancel()
		resume()
		assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Cancelled}, Access: contract.Ended}, settle(put))
		assert.Equal(t, contract.Ended, settle(get).Access)
		assert.Equal(t, [][]string{{"g"}}, v.callKeys())
		teardown(t, d, reg)
	})
}

// A Recycle whose teardown leaves no fresh resources closes the driver
// and stops the pool with it.
func TestARecycleThatClosesStopsThePool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := &verdicts{unprovable: map[string]bool{"k": true}}
		d, reg, err := newRigWith(&tearing{verdicts: v, err: contract.ErrRecycledClosed}, Options{Workers: 2, GetsFirst: true})
		require.NoError(t, err)
		op, err := d.Get(rowAt("k", 0), nil, nil)
		require.NoError(t, err)
		assert.Equal(t, contract.Unprovable, settle(op).Access)
		require.ErrorIs(t, d.Recycle(context.Background()), contract.ErrRecycledClosed)
		assert.Equal(t, contract.Ended, op.Poll(nil).Access)
		assert.True(t, poolStopped(d), "the closed driver's pool is stopped")
		require.NoError(t, d.Unregister(reg))
		require.NoError(t, d.Close())
	})
}
