package mooncakedrv

import (
	"time"

	"bytes"
	"context"
	"fmt"
	"github.com/kvshare/kvshare/patience"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

// Every row of the get half of the verdict table, through the fake.
func TestGetVerdictsThroughTheStore(t *testing.T) {
	whole := pattern(4, slotBytes)
	cases := []struct {
		name       string
		stage      func(r *rig)
		want       contract.RowStatus
		unprovable bool
		slot       func(slot []byte) bool // what the slot must hold after
	}{
		{name: "the whole object", want: contract.Ready,
			stage: func(r *rig) { seed(r, "k", whole) },
			slot:  func(s []byte) bool { return bytes.Equal(s, whole) }},
		{name: "a shorter object lands in the slot's head", want: contract.Fault,
			stage: func(r *rig) { seed(r, "k", whole[:100]) },
			slot:  func(s []byte) bool { return bytes.Equal(s[:100], whole[:100]) && untouched(s[100:]) }},
		{name: "a longer object: -600, nothing written", want: contract.Fault,
			stage: func(r *rig) { seed(r, "k", append(bytes.Clone(whole), 1)) },
			slot:  untouched},
		{name: "absent: -704 Miss", want: contract.Miss, slot: untouched},
		{name: "-703 NotReady", want: contract.NotReady, slot: untouched,
			stage: func(r *rig) { script(r, fakesdk.Fault{Op: fakesdk.Get, Code: mooncakesdk.ReplicaIsNotReady}) }},
		{name: "-707 then a whole reread: Ready", want: contract.Ready,
			stage: func(r *rig) {
				seed(r, "k", whole)
				script(r, fakesdk.Fault{Op: fakesdk.Get, Code: mooncakesdk.LeaseExpired, Phase: fakesdk.AfterLanding, Times: 1})
			},
			slot: func(s []byte) bool { return bytes.Equal(s, whole) }},
		{name: "-707 twice: Fault, never Miss", want: contract.Fault,
			stage: func(r *rig) {
				seed(r, "k", whole)
				script(r, fakesdk.Fault{Op: fakesdk.Get, Code: mooncakesdk.LeaseExpired, Phase: fakesdk.AfterLanding, Times: 2})
			}},
		{name: "-707 then the object vanished: Fault", want: contract.Fault,
			stage: func(r *rig) {
				seed(r, "k", whole)
				script(r, fakesdk.Fault{Op: fakesdk.Get, Code: mooncakesdk.LeaseExpired, Phase: fakesdk.AfterLanding, Times: 1},
					fakesdk.Fault{Op: fakesdk.Get, Key: r.key("k"), Vanish: true, Phase: fakesdk.AfterLanding, Times: 1})
			}},
		{name: "-800: unprovable", want: contract.Fault, unprovable: true,
			stage: func(r *rig) { script(r, fakesdk.Fault{Op: fakesdk.Get, Code: mooncakesdk.TransferFail}) }},
		{name: "-900", want: contract.Fault,
			stage: func(r *rig) { script(r, fakesdk.Fault{Op: fakesdk.Get, Code: mooncakesdk.RPCFail}) }},
		{name: "-901", want: contract.Fault,
			stage: func(r *rig) { script(r, fakesdk.Fault{Op: fakesdk.Get, Code: mooncakesdk.RPCTimeout}) }},
		{name: "another code", want: contract.Fault,
			stage: func(r *rig) { script(r, fakesdk.Fault{Op: fakesdk.Get, Code: mooncakesdk.ChecksumMismatch}) }},
		{name: "the whole call -1: unprovable", want: contract.Fault, unprovable: true,
			stage: func(r *rig) { script(r, fakesdk.Fault{Op: fakesdk.Get, Fail: true}) }},
		{name: "a panic in the binding: unprovable", want: contract.Fault, unprovable: true,
			stage: func(r *rig) { script(r, fakesdk.Fault{Op: fakesdk.Get, Panic: true}) }},
		{name: "the reread fails as a whole: unprovable", want: contract.Fault, unprovable: true,
			stage: func(r *rig) {
				seed(r, "k", whole)
				script(r, fakesdk.Fault{Op: fakesdk.Get, Code: mooncakesdk.LeaseExpired, Phase: fakesdk.AfterLanding, Times: 1},
					fakesdk.Fault{Op: fakesdk.Get, Fail: true})
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, fakesdk.Options{}, Config{})
			if tc.stage != nil {
				tc.stage(r)
			}
			clear(r.mem.slot(3))
			st := r.get([]string{"k"}, 3)
			assert.Equal(t, []contract.RowStatus{tc.want}, st.Rows)
			if tc.slot != nil {
				assert.True(t, tc.slot(r.mem.slot(3)), "the slot holds what the verdict says")
			}
			if tc.unprovable {
				assert.Equal(t, contract.Unprovable, st.Access)
				assert.ErrorIs(t, r.drv.Unregister(r.reg), ErrRegionBusy)
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				assert.False(t, r.drv.Drain(ctx))
				return
			}
			assert.Equal(t, contract.Ended, st.Access)
			r.close()
		})
	}
}

func seed(r *rig, name string, data []byte) {
	r.t.Helper()
	ok, err := r.store.Seed(r.key(name), data)
	require.NoError(r.t, err)
	require.True(r.t, ok)
}

func untouched(s []byte) bool {
	for _, b := range s {
		if b != 0 {
			return false
		}
	}
	return true
}

// Rows of one get keep their order whatever their verdicts.
func TestAGetAnswersRowsInOrder(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{RowsPerCall: 2})
	seed(r, "a", pattern(1, slotBytes))
	seed(r, "b", pattern(2, slotBytes))
	st := r.get([]string{"a", "b", "absent", "a2"}, 0, 1, 2, 3)
	assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Ready, contract.Miss, contract.Miss}, st.Rows)
	r.close()
}

// A get held inside the SDK keeps the access Open, the region busy, and
// Drain with an expired context returns at once, making no SDK call;
// once the call returns, Drain answers true.
func TestDrainWaitsForAGetInsideTheSDK(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{Workers: 1})
	seed(r, "k", pattern(1, slotBytes))
	gate := fakesdk.NewGate()
	script(r, fakesdk.Fault{Op: fakesdk.Get, Hold: gate, Times: 1})
	f, ch := notify()
	held, err := r.drv.Get(r.batch([]string{"k"}, 0), nil, f)
	require.NoError(t, err)
	<-gate.Reached()
	queued, err := r.drv.Get(r.batch([]string{"k"}, 1), nil, nil)
	require.NoError(t, err)
	assert.ErrorIs(t, r.drv.Unregister(r.reg), ErrRegionBusy)
	before := r.store.Calls()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.False(t, r.drv.Drain(ctx), "a get is inside the SDK")
	assert.Equal(t, before, r.store.Calls(), "Drain makes no SDK call")
	assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Cancelled}, Access: contract.Ended}, queued.Poll(nil),
		"the part no worker took ended Cancelled")
	_, err = r.drv.Get(r.batch([]string{"k"}, 2), nil, nil)
	assert.ErrorIs(t, err, contract.ErrDriverRejected, "a drained driver takes no work")
	assert.ErrorIs(t, r.drv.Close(), contract.ErrDriverRejected, "Close only after a true Drain")

	gate.Open()
	st := settle(t, held, ch)
	assert.Equal(t, []contract.RowStatus{contract.Ready}, st.Rows)
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	assert.True(t, r.drv.Drain(ctx2))
	assert.ErrorIs(t, r.drv.Close(), contract.ErrDriverRejected, "a region is still registered")
	require.NoError(t, r.drv.Unregister(r.reg))
	require.NoError(t, r.drv.Close())
	require.NoError(t, r.drv.Close(), "closing twice is nil")
}

// Cancel ends the parts no worker took; a part inside the SDK runs on.
func TestCancelEndsTheQueuedParts(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{Workers: 1, RowsPerCall: 1})
	gate := fakesdk.NewGate()
	script(r, fakesdk.Fault{Op: fakesdk.Put, Hold: gate, Times: 1})
	for i := range 3 {
		r.mem.fill(i, byte(i))
	}
	f, ch := notify()
	op, err := r.drv.Put(r.batch([]string{"a", "b", "c"}, 0, 1, 2), f)
	require.NoError(t, err)
	<-gate.Reached()
	op.Cancel()
	gate.Open()
	st := settle(t, op, ch)
	assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Cancelled, contract.Cancelled}, st.Rows)
	assert.Equal(t, contract.Ended, st.Access)
	assert.Equal(t, 1, r.store.Calls().Put, "the cancelled parts never reached the store")
	_, ok := r.store.Object(r.key("b"))
	assert.False(t, ok)
	assert.Zero(t, r.drv.Stats().KeysWriting, "cancelled rows end their marks")
	r.close()
}

// A transfer the store gave up on (-800) while it still runs: the access
// is unprovable, the region stays registered, and the memory the late
// transfer writes is still lent when it does.
func TestATransferStillRunningKeepsTheRegion(t *testing.T) {
	r := newRig(t, fakesdk.Options{TransferTimeout: -1}, Config{})
	seed(r, "k", pattern(7, slotBytes))
	running := fakesdk.NewGate()
	script(r, fakesdk.Fault{Op: fakesdk.Get, Code: mooncakesdk.TransferFail, Running: running})
	st := r.get([]string{"k"}, 2)
	assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Fault}, Access: contract.Unprovable}, st)
	running.Open()
	running.Wait() // the late write lands in memory still lent
	assert.Equal(t, pattern(7, slotBytes), r.mem.slot(2))
	assert.ErrorIs(t, r.drv.Unregister(r.reg), ErrRegionBusy)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	assert.False(t, r.drv.Drain(ctx))
	s := r.drv.Stats()
	assert.EqualValues(t, 1, s.OpsUnprovable)
	assert.EqualValues(t, 1, s.RowsUnprovable)
}

// Drain ends Cancelled the parts no worker took and tells each of their
// operations, however its parts lie in the queue.
func TestDrainTellsEveryOperationItCancelled(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{Workers: 1, RowsPerCall: 1})
	gate := fakesdk.NewGate()
	script(r, fakesdk.Fault{Op: fakesdk.Get, Key: r.key("blocker"), Hold: gate, Times: 1})
	fb, chb := notify()
	blocker, err := r.drv.Get(r.batch([]string{"blocker"}, 0), nil, fb)
	require.NoError(t, err)
	<-gate.Reached() // the one worker is inside the SDK; the rest queue
	type queued struct {
		op      contract.Operation
		changed <-chan struct{}
		rows    int
	}
	var ops []queued
	for i, names := range [][]string{{"a", "b", "c"}, {"d", "e"}, {"f"}} {
		f, ch := notify()
		slots := make([]int, len(names))
		for j := range slots {
			slots[j] = 1 + 3*i + j
		}
		var op contract.Operation
		if i == 1 {
			op, err = r.drv.Put(r.batch(names, slots...), f)
		} else {
			op, err = r.drv.Get(r.batch(names, slots...), nil, f)
		}
		require.NoError(t, err)
		ops = append(ops, queued{op, ch, len(names)})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.False(t, r.drv.Drain(ctx), "a get is inside the SDK")
	wait := patience.Wait()
	for i, q := range ops {
		select {
		case <-q.changed: // told on a goroutine of the driver's
		case <-time.After(wait):
			t.Errorf("operation %d was not told its rows ended within %v", i, wait)
		}
		want := make([]contract.RowStatus, q.rows)
		for j := range want {
			want[j] = contract.Cancelled
		}
		assert.Equal(t, contract.OpState{Rows: want, Access: contract.Ended}, q.op.Poll(nil), "operation %d", i)
	}
	gate.Open()
	settle(t, blocker, chb)
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	require.True(t, r.drv.Drain(ctx2))
	require.NoError(t, r.drv.Unregister(r.reg))
	require.NoError(t, r.drv.Close())
}

// Close refuses while an Unregister is still inside the SDK: that
// registration is not revoked yet. It names every registration left.
func TestCloseWaitsForAnUnregisterInsideTheSDK(t *testing.T) {
	for _, another := range []bool{false, true} {
		t.Run(fmt.Sprintf("another region registered=%v", another), func(t *testing.T) {
			r := newRig(t, fakesdk.Options{}, Config{})
			var other contract.Registration
			want := "1 registrations not revoked"
			if another {
				var err error
				other, err = r.drv.Register(newMemory(t, 1, slotBytes).region)
				require.NoError(t, err)
				want = "2 registrations not revoked"
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			require.True(t, r.drv.Drain(ctx))
			gate := fakesdk.NewGate()
			script(r, fakesdk.Fault{Op: fakesdk.Unregister, Hold: gate, Times: 1})
			done := make(chan error, 1)
			go func() { done <- r.drv.Unregister(r.reg) }()
			<-gate.Reached()

			err := r.drv.Close()
			require.ErrorIs(t, err, contract.ErrDriverRejected)
			assert.Contains(t, err.Error(), want)
			assert.Zero(t, r.store.Calls().Destroy, "the client is still there")

			gate.Open()
			require.NoError(t, <-done)
			if another {
				require.NoError(t, r.drv.Unregister(other))
			}
			require.NoError(t, r.drv.Close())
			assert.Equal(t, 1, r.store.Calls().Destroy)
		})
	}
}

// The configured logger is the one the driver logs to.
func TestTheDriverLogsToItsLogger(t *testing.T) {
	var out bytes.Buffer
	r := newRig(t, fakesdk.Options{}, Config{Logger: slog.New(slog.NewTextHandler(&out, nil))})
	script(r, fakesdk.Fault{Op: fakesdk.Get, Key: r.key("k"), Code: mooncakesdk.InvalidParams, Times: 1})
	st := r.get([]string{"k"}, 0)
	assert.Equal(t, []contract.RowStatus{contract.Fault}, st.Rows)
	assert.Contains(t, out.String(), "mooncakedrv: rows ended Fault")
	r.close()
}
