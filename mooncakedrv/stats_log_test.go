package mooncakedrv

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
	"github.com/kvshare/kvshare/patience"
)

// Rows cancelled before a worker took them are counted Cancelled in
// their own direction.
func TestCancelledRowsAreCountedByDirection(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{Workers: 1, RowsPerCall: 1})
	gate := fakesdk.NewGate()
	script(r, fakesdk.Fault{Op: fakesdk.Put, Hold: gate, Times: 1})
	onChange, changed := notify()
	held, err := r.drv.Put(r.batch([]string{"held"}, 0), onChange)
	require.NoError(t, err)
	<-gate.Reached() // the only worker is inside the SDK

	put, err := r.drv.Put(r.batch([]string{"p0", "p1", "p2"}, 1, 2, 3), nil)
	require.NoError(t, err)
	get, err := r.drv.Get(r.batch([]string{"g0", "g1"}, 4, 5), nil, nil)
	require.NoError(t, err)
	put.Cancel()
	get.Cancel()
	s := r.drv.Stats()
	assert.EqualValues(t, 3, s.PutRows[contract.Cancelled])
	assert.EqualValues(t, 2, s.GetRows[contract.Cancelled])

	gate.Open()
	settle(t, held, changed)
	r.close()
}

// A panic inside the SDK is counted once and logged as a panic; a call
// that returns is not counted.
func TestAPanicInTheSDKIsCountedAndLogged(t *testing.T) {
	var out bytes.Buffer
	r := newRig(t, fakesdk.Options{}, Config{Logger: slog.New(slog.NewTextHandler(&out, nil))})
	r.put([]string{"k"}, 0)
	assert.Zero(t, r.drv.Stats().Panics)
	assert.NotContains(t, out.String(), "panic")

	script(r, fakesdk.Fault{Op: fakesdk.Get, Panic: true, Times: 1})
	st := r.get([]string{"k"}, 1)
	assert.Equal(t, []contract.RowStatus{contract.Fault}, st.Rows)
	assert.EqualValues(t, 1, r.drv.Stats().Panics)
	assert.Contains(t, out.String(), `failure="panic: `)
	// A panic proves nothing about the transfer: the access stays
	// unprovable, so the rig is not closed.
	assert.Equal(t, contract.Unprovable, st.Access)
}

// A callback that panics is logged and dropped; one that returns logs
// nothing.
func TestAPanickingCallbackIsLogged(t *testing.T) {
	var out bytes.Buffer
	r := newRig(t, fakesdk.Options{}, Config{Logger: slog.New(slog.NewTextHandler(&out, nil))})
	called := make(chan struct{}, 8)
	op, err := r.drv.Put(r.batch([]string{"a"}, 0), func() { called <- struct{}{} })
	require.NoError(t, err)
	settle(t, op, called)
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	require.True(t, r.drv.Drain(ctx)) // every callback returned
	assert.NotContains(t, out.String(), "onChange panicked")

	r2 := newRig(t, fakesdk.Options{}, Config{Logger: slog.New(slog.NewTextHandler(&out, nil))})
	op, err = r2.drv.Put(r2.batch([]string{"b"}, 0), func() { panic("the engine's bug") })
	require.NoError(t, err)
	require.True(t, r2.drv.Drain(ctx))
	assert.NotEqual(t, contract.Open, op.Poll(nil).Access)
	assert.Contains(t, out.String(), "onChange panicked")
	assert.Contains(t, out.String(), "the engine's bug")
}

// The log of a part's faults counts them and names the first row's key.
func TestTheFaultLogNamesTheFirstRow(t *testing.T) {
	var out bytes.Buffer
	r := newRig(t, fakesdk.Options{}, Config{Logger: slog.New(slog.NewTextHandler(&out, nil))})
	script(r, fakesdk.Fault{Op: fakesdk.Get, Code: mooncakesdk.RPCFail, Times: 1})
	st := r.get([]string{"x0", "x1", "x2"}, 0, 1, 2)
	assert.Equal(t, statuses(contract.Fault, 3), st.Rows)
	var line string
	for l := range strings.SplitSeq(out.String(), "\n") {
		if strings.Contains(l, "rows ended Fault") {
			line = l
		}
	}
	require.NotEmpty(t, line, out.String())
	assert.Contains(t, line, " rows=3 of=3 ")
	assert.Contains(t, line, `"first key"=`+r.key("x0")+" ")
	assert.Contains(t, line, "answer=RPC_FAIL(-900)")
	r.close()
}
