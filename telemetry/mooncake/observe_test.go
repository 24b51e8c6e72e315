package mooncake_test

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
	"github.com/kvshare/kvshare/telemetry"
	"github.com/kvshare/kvshare/telemetry/mooncake"
)

const prefix = "telemetry"

type hold struct{}

func (hold) Release() {}

// lender is staging memory lent to a backend over a Mooncake driver on a
// fake store. Nothing is given back at the end: the scenario leaves a
// call unprovable, which keeps the memory for good.
type lender struct {
	driver  *mooncakedrv.Driver
	backend *binding.Backend
	woke    chan struct{}
}

func newLender(t *testing.T, store *fakesdk.Store) *lender {
	t.Helper()
	mem, err := memdrv.Alloc(4096, 16, contract.Host)
	require.NoError(t, err)
	quiet := slog.New(slog.DiscardHandler)
	d, err := mooncakedrv.New(store.Client(), mooncakedrv.Config{Logger: quiet})
	require.NoError(t, err)
	regions, err := binding.Bind(d, []contract.SlotRegion{mem.Region}, hold{})
	require.NoError(t, err)
	l := &lender{driver: d, woke: make(chan struct{}, 1)}
	l.backend, err = binding.New(regions, binding.Config{KeyPrefix: prefix, Logger: quiet, Wake: func() {
		select {
		case l.woke <- struct{}{}:
		default:
		}
	}})
	require.NoError(t, err)
	return l
}

// submit runs one attempt over names at slots from first on, and waits
// until its outcome is known.
func (l *lender) submit(t *testing.T, publish bool, first int, names ...string) contract.Outcome {
	t.Helper()
	g := contract.Group{}
	for i, n := range names {
		g.Slots = append(g.Slots, int32(first+i))
		g.Names = append(g.Names, []byte(n))
	}
	v := contract.View{Groups: []contract.Group{g}}
	var a contract.Attempt
	var err error
	if publish {
		a, err = l.backend.Publish(v, nil)
	} else {
		a, err = l.backend.Fetch(v, nil)
	}
	require.NoError(t, err)
	for {
		if o, ok := a.Outcome(); ok {
			return o
		}
		<-l.woke
	}
}

func key(t *testing.T, name string) string {
	t.Helper()
	stem, err := keys.NewStem(prefix)
	require.NoError(t, err)
	k, err := stem.Key([]byte(name))
	require.NoError(t, err)
	return k
}

func row(dir contract.Direction, s contract.RowStatus) []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String("direction", dir.String()), attribute.String("status", s.String())}
}

// A Mooncake driver on the fake store, driven through a backend to a key
// left open, a put declined because of it, a miss and a panic that
// leaves access unprovable: each figure collected equals the driver's
// Stats().
func TestFiguresEqualTheDriversStats(t *testing.T) {
	mp, reader := newReader(t)
	store := fakesdk.New(fakesdk.Options{})
	l := newLender(t, store)
	reg, err := mooncake.Observe(mp, l.driver)
	require.NoError(t, err)
	defer func() { require.NoError(t, reg.Unregister()) }()

	require.Equal(t, 3, l.submit(t, true, 0, "m0", "m1", "m2").Prefix())
	// A put answered RPC_FAIL: Fault, and the key is left open.
	require.NoError(t, store.Script(fakesdk.Fault{Op: fakesdk.Put, Key: key(t, "lost"), Code: mooncakesdk.RPCFail, Times: 1}))
	require.Error(t, l.submit(t, true, 3, "lost").Fault)
	// The next put of it is Declined: left open, and no object stands.
	require.Equal(t, 0, l.submit(t, true, 3, "lost").Prefix())
	// A get: one Ready, one Miss.
	require.Equal(t, []bool{true, false}, l.submit(t, false, 8, "m0", "absent").Delivered)
	// A panic inside the SDK call: Fault, access unprovable, for good.
	require.NoError(t, store.Script(fakesdk.Fault{Op: fakesdk.Get, Key: key(t, "m1"), Panic: true, Times: 1}))
	require.Error(t, l.submit(t, false, 10, "m1").Fault)

	s := l.driver.Stats()
	require.EqualValues(t, 1, s.KeysLeftOpen)
	require.EqualValues(t, 1, s.RowsDeclinedLeftOpen)
	require.EqualValues(t, 1, s.RowsUnprovable)
	require.EqualValues(t, 1, s.Panics)
	r := collect(t, reader)
	assert.Equal(t, s, l.driver.Stats(), "nothing moved since the snapshot")

	for d, byStatus := range map[contract.Direction][contract.RowStatusCount]int64{contract.PutDir: s.PutRows, contract.GetDir: s.GetRows} {
		for st := contract.Ready; st < contract.RowStatusCount; st++ {
			assert.Equal(t, byStatus[st], r.value(t, "kvshare.mooncake.rows", row(d, st)...), "%v %v", d, st)
		}
	}
	rows, monotonic := r.sum(t, "kvshare.mooncake.rows")
	assert.True(t, monotonic)
	assert.Len(t, rows, 2*int(contract.RowStatusCount-1), "both directions, every final status")
	assert.EqualValues(t, 3, r.value(t, "kvshare.mooncake.rows", row(contract.PutDir, contract.Ready)...))
	assert.EqualValues(t, 1, r.value(t, "kvshare.mooncake.rows", row(contract.PutDir, contract.Declined)...))
	assert.EqualValues(t, 1, r.value(t, "kvshare.mooncake.rows", row(contract.GetDir, contract.Miss)...))

	assert.Equal(t, s.KeysLeftOpen, r.value(t, "kvshare.mooncake.keys_left_open"))
	assert.Equal(t, s.RowsDeclinedLeftOpen, r.value(t, "kvshare.mooncake.rows_declined_left_open"))
	assert.Equal(t, s.RowsUnprovable, r.value(t, "kvshare.mooncake.rows_unprovable"))
	assert.Equal(t, s.Calls, r.value(t, "kvshare.mooncake.sdk.calls"))
	assert.Equal(t, s.Panics, r.value(t, "kvshare.mooncake.sdk.panics"))
	assert.Equal(t, s.CallsShared, r.value(t, "kvshare.mooncake.sdk.calls_shared"))
	assert.Equal(t, s.PartsUnprovableShared, r.value(t, "kvshare.mooncake.parts_unprovable_shared"))
	assert.Equal(t, s.Recycles, r.value(t, "kvshare.mooncake.recycles"))
	assert.Equal(t, s.RowsRecycled, r.value(t, "kvshare.mooncake.rows_recycled"))

	type shape struct {
		unit      string
		monotonic bool
	}
	want := map[string]shape{
		"kvshare.mooncake.rows":                    {"{row}", true},
		"kvshare.mooncake.keys_left_open":          {"{key}", false},
		"kvshare.mooncake.rows_declined_left_open": {"{row}", true},
		"kvshare.mooncake.rows_unprovable":         {"{row}", false},
		"kvshare.mooncake.sdk.calls":               {"{call}", true},
		"kvshare.mooncake.sdk.panics":              {"{panic}", true},
		"kvshare.mooncake.sdk.calls_shared":        {"{call}", true},
		"kvshare.mooncake.parts_unprovable_shared": {"{part}", true},
		"kvshare.mooncake.recycles":                {"{recycle}", true},
		"kvshare.mooncake.rows_recycled":           {"{row}", true},
	}
	assert.Len(t, r, len(want), "the driver's instruments and no others")
	for name, w := range want {
		_, monotonic := r.sum(t, name)
		assert.Equal(t, w.unit, r[name].Unit, name)
		assert.Equal(t, w.monotonic, monotonic, name)
		assert.NotEmpty(t, r[name].Description, name)
	}

	// The backend over the driver says the same of the unprovable call.
	assert.EqualValues(t, 1, l.backend.Stats().CallsUnprovable)
}

// The driver's and the backend's instruments share one provider and one
// scope, told apart by name; attributes reach every point.
func TestDriverAndBackendTogether(t *testing.T) {
	mp, reader := newReader(t)
	l := newLender(t, fakesdk.New(fakesdk.Options{}))
	lenderAttr := attribute.String("lender", "a")
	regB, err := telemetry.Observe(mp, l.backend, lenderAttr)
	require.NoError(t, err)
	regD, err := mooncake.Observe(mp, l.driver, lenderAttr)
	require.NoError(t, err)
	require.Equal(t, 2, l.submit(t, true, 0, "a", "b").Prefix())

	r := collect(t, reader)
	assert.EqualValues(t, 2, r.value(t, "kvshare.rows", lenderAttr, attribute.String("direction", "put"), attribute.String("status", "ready")))
	assert.EqualValues(t, 2, r.value(t, "kvshare.mooncake.rows", append(row(contract.PutDir, contract.Ready), lenderAttr)...))

	require.NoError(t, regD.Unregister())
	require.NoError(t, regB.Unregister())
	assert.Empty(t, collect(t, reader))
}

func TestObserveRefusesBadArguments(t *testing.T) {
	mp := noop.NewMeterProvider()
	_, err := mooncake.Observe(mp, nil)
	assert.ErrorIs(t, err, telemetry.ErrArgument)
	d, err := mooncakedrv.New(fakesdk.New(fakesdk.Options{}).Client(), mooncakedrv.Config{})
	require.NoError(t, err)
	_, err = mooncake.Observe(nil, d)
	assert.ErrorIs(t, err, telemetry.ErrArgument)
	_, err = mooncake.Observe(mp, d, attribute.String("direction", "up"))
	assert.ErrorIs(t, err, telemetry.ErrArgument)
}
