package mooncakedrv

import (
	"bytes"
	"context"
	"github.com/kvshare/kvshare/drivekit"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

func TestPutThenGetRoundTrip(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{})
	r.mem.fill(0, 1)
	r.mem.fill(1, 2)
	st := r.put([]string{"a", "b"}, 0, 1)
	assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Ready, contract.Ready}, Access: contract.Ended}, st)
	obj, ok := r.store.Object(r.key("a"))
	require.True(t, ok, "stored under exactly the batch's key")
	assert.Equal(t, pattern(1, slotBytes), obj)

	st = r.get([]string{"b", "a"}, 5, 6)
	assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Ready}, st.Rows)
	assert.Equal(t, contract.Ended, st.Access)
	assert.Equal(t, pattern(2, slotBytes), r.mem.slot(5))
	assert.Equal(t, pattern(1, slotBytes), r.mem.slot(6))
	calls := r.store.Calls()
	assert.Equal(t, 1, calls.Put)
	assert.Equal(t, 1, calls.Exist, "one exists-check confirms the part's 0s")
	assert.Equal(t, 1, calls.Get)
	r.close()
	assert.Equal(t, 1, r.store.Calls().Destroy, "Close destroys the client the driver owns")
}

// Every row of the put half of the verdict table, through the fake.
func TestPutVerdictsThroughTheStore(t *testing.T) {
	cases := []struct {
		name       string
		opts       fakesdk.Options
		stage      func(r *rig)
		want       contract.RowStatus
		unprovable bool
		leftOpen   bool
	}{
		{name: "stored: 0 confirmed by exists 1", want: contract.Ready},
		{name: "an existing object: 0, exists 1 (the first object stays)", want: contract.Ready,
			stage: func(r *rig) { _, _ = r.store.Seed(r.key("k"), []byte("first")) }},
		{name: "pool full: -200", opts: fakesdk.Options{Capacity: 100}, want: contract.Declined},
		{name: "-600", want: contract.Fault,
			stage: func(r *rig) { script(r, fakesdk.Fault{Op: fakesdk.Put, Code: mooncakesdk.InvalidParams}) }},
		{name: "-800: unprovable", want: contract.Fault, unprovable: true,
			stage: func(r *rig) { script(r, fakesdk.Fault{Op: fakesdk.Put, Code: mooncakesdk.TransferFail}) }},
		{name: "-900: left open", want: contract.Fault, leftOpen: true,
			stage: func(r *rig) { script(r, fakesdk.Fault{Op: fakesdk.Put, Code: mooncakesdk.RPCFail}) }},
		{name: "-901: left open", want: contract.Fault, leftOpen: true,
			stage: func(r *rig) { script(r, fakesdk.Fault{Op: fakesdk.Put, Code: mooncakesdk.RPCTimeout}) }},
		{name: "-1: left open", want: contract.Fault, leftOpen: true,
			stage: func(r *rig) { script(r, fakesdk.Fault{Op: fakesdk.Put, Code: mooncakesdk.InternalError}) }},
		{name: "another code", want: contract.Fault,
			stage: func(r *rig) { script(r, fakesdk.Fault{Op: fakesdk.Put, Code: mooncakesdk.TenantQuotaExceeded}) }},
		{name: "whole put call -1: unprovable", want: contract.Fault, unprovable: true,
			stage: func(r *rig) { script(r, fakesdk.Fault{Op: fakesdk.Put, Fail: true}) }},
		{name: "a panic in the put call: unprovable", want: contract.Fault, unprovable: true,
			stage: func(r *rig) { script(r, fakesdk.Fault{Op: fakesdk.Put, Panic: true}) }},
		{name: "the exists-check fails as a whole: unprovable", want: contract.Fault, unprovable: true,
			stage: func(r *rig) { script(r, fakesdk.Fault{Op: fakesdk.Exist, Fail: true}) }},
		{name: "the exists-check answers a code", want: contract.Fault,
			stage: func(r *rig) { script(r, fakesdk.Fault{Op: fakesdk.Exist, Code: mooncakesdk.RPCFail}) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.opts, Config{})
			if tc.stage != nil {
				tc.stage(r)
			}
			r.mem.fill(0, 9)
			st := r.put([]string{"k"}, 0)
			assert.Equal(t, []contract.RowStatus{tc.want}, st.Rows)
			s := r.drv.Stats()
			if tc.unprovable {
				assert.Equal(t, contract.Unprovable, st.Access)
				assert.EqualValues(t, 1, s.RowsUnprovable)
				assert.ErrorIs(t, r.drv.Unregister(r.reg), ErrRegionBusy, "an unprovable operation pins its region")
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				assert.False(t, r.drv.Drain(ctx))
				assert.ErrorIs(t, r.drv.Close(), contract.ErrDriverRejected)
				return
			}
			assert.Equal(t, contract.Ended, st.Access)
			if tc.leftOpen {
				assert.EqualValues(t, 1, s.KeysLeftOpen)
			} else {
				assert.Zero(t, s.KeysLeftOpen)
			}
			r.close()
		})
	}
}

func script(r *rig, faults ...fakesdk.Fault) {
	r.t.Helper()
	require.NoError(r.t, r.store.Script(faults...))
}

// A key left open is never put again: a later put of it is Ready when an
// object stands behind it, else Declined (counted apart), and no put call
// carries it.
func TestAKeyLeftOpenIsNeverPutAgain(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{})
	script(r, fakesdk.Fault{Op: fakesdk.Put, Key: r.key("k"), Code: mooncakesdk.RPCTimeout, Times: 1})
	r.mem.fill(0, 3)
	require.Equal(t, []contract.RowStatus{contract.Fault}, r.put([]string{"k"}, 0).Rows)
	puts := r.store.Calls().Put

	st := r.put([]string{"k", "other"}, 0, 1)
	assert.Equal(t, []contract.RowStatus{contract.Declined, contract.Ready}, st.Rows, "no object behind it: Declined")
	s := r.drv.Stats()
	assert.EqualValues(t, 1, s.KeysLeftOpen)
	assert.EqualValues(t, 1, s.RowsDeclinedLeftOpen)
	counters := map[string]drivekit.Counter{}
	for _, c := range r.drv.Counters(nil) {
		counters[c.Name] = c
	}
	assert.Equal(t, s.KeysLeftOpen, counters["keys_left_open"].Value, "the metrics read the same ledger")
	assert.True(t, counters["keys_left_open"].Level)
	assert.Equal(t, s.RowsDeclinedLeftOpen, counters["rows_declined_left_open"].Value)
	assert.Equal(t, s.Calls, counters["sdk_calls"].Value)
	assert.Equal(t, puts+1, r.store.Calls().Put, "one put call, for the other row only")
	_, stored := r.store.Object(r.key("k"))
	assert.False(t, stored, "the key left open was not put")

	// The late end of the first put lands after all (or another writer
	// stores it): now a put of it is Ready, still without putting it.
	_, err := r.store.Seed(r.key("k"), pattern(3, slotBytes))
	require.NoError(t, err)
	st = r.put([]string{"k"}, 0)
	assert.Equal(t, []contract.RowStatus{contract.Ready}, st.Rows)
	assert.Equal(t, puts+1, r.store.Calls().Put, "still never put again")
	assert.EqualValues(t, 1, r.drv.Stats().RowsDeclinedLeftOpen)
	r.close()
}

// Two concurrent puts of one key from one driver: the second is NotReady
// at once, without an SDK put of it.
func TestASecondPutOfAKeyThisDriverIsWritingIsNotReady(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{})
	gate := fakesdk.NewGate()
	script(r, fakesdk.Fault{Op: fakesdk.Put, Key: r.key("k"), Hold: gate, Times: 1})
	r.mem.fill(0, 1)
	r.mem.fill(1, 2)
	f1, ch1 := notify()
	first, err := r.drv.Put(r.batch([]string{"k"}, 0), f1)
	require.NoError(t, err)
	<-gate.Reached()
	puts := r.store.Calls().Put

	st := r.put([]string{"k"}, 1)
	assert.Equal(t, []contract.RowStatus{contract.NotReady}, st.Rows)
	assert.Equal(t, contract.Ended, st.Access)
	assert.Equal(t, puts, r.store.Calls().Put, "the second put never reached the store")

	gate.Open()
	st = settle(t, first, ch1)
	assert.Equal(t, []contract.RowStatus{contract.Ready}, st.Rows)
	obj, _ := r.store.Object(r.key("k"))
	assert.Equal(t, pattern(1, slotBytes), obj, "the first put's bytes")
	assert.Zero(t, r.drv.Stats().KeysWriting, "the mark ends with the row")
	// Once the first put ended, a put of the key goes to the store again.
	assert.Equal(t, []contract.RowStatus{contract.Ready}, r.put([]string{"k"}, 1).Rows)
	assert.Equal(t, puts+1, r.store.Calls().Put)
	r.close()
}

// Only the rows whose keys a put of this driver is writing are NotReady,
// wherever they fall in a batch cut into parts.
func TestOnlyTheRowsOfKeysBeingWrittenAreNotReady(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{RowsPerCall: 2})
	gate := fakesdk.NewGate()
	script(r, fakesdk.Fault{Op: fakesdk.Put, Key: r.key("k"), Hold: gate, Times: 1})
	f1, ch1 := notify()
	first, err := r.drv.Put(r.batch([]string{"k"}, 0), f1)
	require.NoError(t, err)
	<-gate.Reached()

	// Parts (a, b) and (c, k): k is the second row of the second part.
	st := r.put([]string{"a", "b", "c", "k"}, 1, 2, 3, 4)
	assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Ready, contract.Ready, contract.NotReady}, st.Rows)
	for _, name := range []string{"a", "b", "c"} {
		_, stored := r.store.Object(r.key(name))
		assert.True(t, stored, name)
	}
	gate.Open()
	settle(t, first, ch1)
	assert.Zero(t, r.drv.Stats().KeysWriting)
	r.close()
}

// Another client writing the key: the put answers 0 and the exists-check
// says 0, so the row is NotReady.
func TestAPutOfAKeyAnotherWriterHasInFlightIsNotReady(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{})
	gate := fakesdk.NewGate()
	script(r, fakesdk.Fault{Op: fakesdk.Put, Key: r.key("k"), Hold: gate, Times: 1})
	other := newMemory(t, 1, slotBytes)
	errs := make(chan error, 1)
	results := make([]int64, 1)
	go func() {
		errs <- r.store.Client().BatchPutFrom([]string{r.key("k")}, []uintptr{other.region.Base}, []uint64{slotBytes}, results)
	}()
	<-gate.Reached()
	r.mem.fill(0, 5)
	assert.Equal(t, []contract.RowStatus{contract.NotReady}, r.put([]string{"k"}, 0).Rows)
	gate.Open()
	require.NoError(t, <-errs)
	r.close()
}

// Parts: at most RowsPerCall rows and BytesPerCall bytes per SDK call.
func TestPartsFollowTheCaps(t *testing.T) {
	cases := []struct {
		name      string
		cfg       Config
		rows      int
		wantCalls int
	}{
		{"one part", Config{}, 5, 1},
		{"rows per call", Config{RowsPerCall: 2}, 5, 3},
		{"bytes per call", Config{BytesPerCall: 3 * slotBytes}, 7, 3},
		{"a row over the byte cap goes alone", Config{BytesPerCall: slotBytes / 2}, 3, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, fakesdk.Options{}, tc.cfg)
			names, slots := make([]string, tc.rows), make([]int, tc.rows)
			for i := range names {
				names[i], slots[i] = string(rune('a'+i)), i
				r.mem.fill(i, byte(i))
			}
			st := r.put(names, slots...)
			for _, s := range st.Rows {
				assert.Equal(t, contract.Ready, s)
			}
			assert.Equal(t, tc.wantCalls, r.store.Calls().Put)
			assert.Equal(t, tc.wantCalls, r.store.Calls().Exist)
			assert.EqualValues(t, tc.wantCalls, r.drv.Stats().Parts)
			r.close()
		})
	}
}

// Stats count each operation's rows by final status, per direction, and
// the parts run and SDK calls made.
func TestStatsCountRowsByVerdict(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{})
	script(r, fakesdk.Fault{Op: fakesdk.Put, Key: r.key("full"), Code: mooncakesdk.NoAvailableHandle, Times: 1})
	r.mem.fill(0, 1)
	r.mem.fill(1, 2)
	assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Declined}, r.put([]string{"a", "full"}, 0, 1).Rows)
	assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Miss, contract.Miss}, r.get([]string{"a", "absent", "full"}, 2, 3, 4).Rows)
	s := r.drv.Stats()
	var put, get [contract.RowStatusCount]int64
	put[contract.Ready], put[contract.Declined] = 1, 1
	get[contract.Ready], get[contract.Miss] = 1, 2
	assert.Equal(t, put, s.PutRows)
	assert.Equal(t, get, s.GetRows)
	assert.EqualValues(t, 2, s.Ops)
	assert.EqualValues(t, 2, s.Parts)
	assert.EqualValues(t, 3, s.Calls, "put-from, its exists-check, get-into")
	r.close()
}

// A put whose exists-check fails for its key ends Fault, and the log
// names the check's answer, not the put's 0.
func TestAFailedConfirmIsLoggedWithItsAnswer(t *testing.T) {
	var out bytes.Buffer
	r := newRig(t, fakesdk.Options{}, Config{Logger: slog.New(slog.NewTextHandler(&out, nil))})
	script(r, fakesdk.Fault{Op: fakesdk.Exist, Key: r.key("k"), Code: mooncakesdk.RPCFail, Times: 1})
	r.mem.fill(0, 1)
	assert.Equal(t, []contract.RowStatus{contract.Fault}, r.put([]string{"k"}, 0).Rows)
	assert.Contains(t, out.String(), "mooncakedrv: rows ended Fault")
	assert.Contains(t, out.String(), mooncakesdk.RPCFail.String())
	r.close()
}
