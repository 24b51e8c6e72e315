package drivermetrics_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/telemetry"
	"github.com/kvshare/kvshare/telemetry/drivermetrics"
)

// shape is an instrument's unit and kind.
type shape struct {
	unit      string
	monotonic bool
}

// kitInstruments are the instruments every driver exports, by name.
var kitInstruments = map[string]shape{
	"kvshare.driver.ops":               {"{operation}", true},
	"kvshare.driver.ops_open":          {"{operation}", false},
	"kvshare.driver.ops_unprovable":    {"{operation}", false},
	"kvshare.driver.rows":              {"{row}", true},
	"kvshare.driver.rows_unprovable":   {"{row}", false},
	"kvshare.driver.hints":             {"{operation}", true},
	"kvshare.driver.parts":             {"{part}", true},
	"kvshare.driver.calls":             {"{call}", true},
	"kvshare.driver.panics":            {"{panic}", true},
	"kvshare.driver.calls_shared":      {"{call}", true},
	"kvshare.driver.parts_shared":      {"{part}", true},
	"kvshare.driver.keys_writing":      {"{key}", false},
	"kvshare.driver.recycles":          {"{recycle}", true},
	"kvshare.driver.ops_recycled":      {"{operation}", true},
	"kvshare.driver.rows_recycled":     {"{row}", true},
	"kvshare.driver.lookups":           {"{lookup}", true},
	"kvshare.driver.lookup_names":      {"{name}", true},
	"kvshare.driver.lookups_abandoned": {"{lookup}", true},
	"kvshare.driver.lookups_refused":   {"{lookup}", true},
	"kvshare.driver.lookups_in_store":  {"{lookup}", false},
}

// plainFigures are the figures of s the instruments without a direction
// carry, by instrument name.
func plainFigures(s drivekit.Stats) map[string]int64 {
	return map[string]int64{
		"kvshare.driver.ops_open": s.OpsOpen, "kvshare.driver.ops_unprovable": s.OpsUnprovable,
		"kvshare.driver.rows_unprovable": s.RowsUnprovable, "kvshare.driver.hints": s.Hints,
		"kvshare.driver.parts": s.Parts, "kvshare.driver.calls": s.Calls, "kvshare.driver.panics": s.Panics,
		"kvshare.driver.calls_shared": s.CallsShared, "kvshare.driver.parts_shared": s.PartsShared,
		"kvshare.driver.keys_writing": s.KeysWriting, "kvshare.driver.recycles": s.Recycles,
		"kvshare.driver.ops_recycled": s.OpsRecycled, "kvshare.driver.rows_recycled": s.RowsRecycled,
		"kvshare.driver.lookups": s.Lookups, "kvshare.driver.lookup_names": s.LookupNames,
		"kvshare.driver.lookups_abandoned": s.LookupsAbandoned, "kvshare.driver.lookups_refused": s.LookupsRefused,
		"kvshare.driver.lookups_in_store": s.LookupsInStore,
	}
}

// assertKit checks that r holds every kit instrument with d's figures,
// on the points with attrs and the driver's name.
func assertKit(t *testing.T, r reading, d drivermetrics.Driver, attrs ...attribute.KeyValue) {
	t.Helper()
	s := d.Stats()
	with := append([]attribute.KeyValue{drivermetrics.DriverKey.String(d.Name())}, attrs...)
	for name, want := range plainFigures(s) {
		assert.Equal(t, want, r.value(t, name, with...), "%s of %s", name, d.Name())
	}
	for dir, ops := range map[contract.Direction]int64{contract.PutDir: s.PutOps, contract.GetDir: s.GetOps} {
		assert.Equal(t, ops, r.value(t, "kvshare.driver.ops", append(with, attribute.String("direction", dir.String()))...), "%v", dir)
	}
	for dir, byStatus := range map[contract.Direction][contract.RowStatusCount]int64{contract.PutDir: s.PutRows, contract.GetDir: s.GetRows} {
		for st := contract.Ready; st < contract.RowStatusCount; st++ {
			at := append(with, attribute.String("direction", dir.String()), attribute.String("status", st.String()))
			assert.Equal(t, byStatus[st], r.value(t, "kvshare.driver.rows", at...), "%v %v", dir, st)
		}
	}
	for name, w := range kitInstruments {
		_, monotonic := r.sum(t, name)
		assert.Equal(t, w.unit, r[name].Unit, name)
		assert.Equal(t, w.monotonic, monotonic, name)
		assert.NotEmpty(t, r[name].Description, name)
	}
}

// Each driver on the kit, memdrv's and a store with counters of its
// own, exports the same instruments, its name on every point, each
// figure equal to the kit's Stats, and the store's counters under
// kvshare.driver.store.<name> with their unit, kind and value.
func TestSameInstrumentsForEveryDriver(t *testing.T) {
	toy := &toyStore{}
	toy.level.Store(7)
	for _, tc := range []struct {
		name    string
		driver  contract.Driver
		kit     drivermetrics.Driver
		counted int // the store's own counters
	}{
		{name: "memdrv", driver: memdrv.New(memdrv.NewStore(), memdrv.Options{}), counted: 0},
		{name: "toy", driver: drivekit.New(toy, drivekit.Options{Name: "toy"}), counted: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kit, ok := tc.driver.(drivermetrics.Driver)
			require.True(t, ok, "%T is a kit driver", tc.driver)
			mp, reader := newReader(t)
			lenderAttr := attribute.String("lender", "a")
			reg, err := drivermetrics.Observe(mp, kit, lenderAttr)
			require.NoError(t, err)
			defer func() { require.NoError(t, reg.Unregister()) }()

			l := newLender(t, tc.driver)
			require.Equal(t, 3, l.submit(t, true, 0, "m0", "m1", "m2").Prefix())
			require.NotEmpty(t, l.submit(t, false, 8, "m0", "absent").Delivered)

			s := kit.Stats()
			require.Positive(t, s.PutOps)
			require.Positive(t, s.GetOps)
			r := collect(t, reader)
			require.Equal(t, s, kit.Stats(), "nothing moved since the snapshot")
			assertKit(t, r, kit, lenderAttr)

			counters := kit.Counters(nil)
			require.Len(t, counters, tc.counted)
			assert.Len(t, r, len(kitInstruments)+len(counters), "the kit's instruments, the store's, no others")
			for _, c := range counters {
				name := drivermetrics.StorePrefix + c.Name
				assert.Equal(t, c.Value, r.value(t, name, drivermetrics.DriverKey.String(kit.Name()), lenderAttr), name)
				_, monotonic := r.sum(t, name)
				assert.Equal(t, !c.Level, monotonic, name)
				assert.Equal(t, c.Unit, r[name].Unit, name)
				assert.Equal(t, c.Description, r[name].Description, name)
			}
		})
	}
	assert.Positive(t, toy.calls.Load(), "the toy store's counter moved")
}

// Two drivers on one provider report into the same instruments, told
// apart by their names; unregistering one leaves the other's points.
func TestDriversShareInstruments(t *testing.T) {
	mp, reader := newReader(t)
	mem := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	toy := drivekit.New(&toyStore{}, drivekit.Options{Name: "toy"})
	regMem, err := drivermetrics.Observe(mp, mem)
	require.NoError(t, err)
	regToy, err := drivermetrics.Observe(mp, toy)
	require.NoError(t, err)
	require.Equal(t, 2, newLender(t, toy).submit(t, true, 0, "a", "b").Prefix())

	r := collect(t, reader)
	assertKit(t, r, mem)
	assertKit(t, r, toy)
	points, _ := r.sum(t, "kvshare.driver.calls")
	assert.Len(t, points, 2, "one series for each driver")
	assert.EqualValues(t, 2, r.value(t, "kvshare.driver.rows",
		drivermetrics.DriverKey.String("toy"), attribute.String("direction", "put"), attribute.String("status", "ready")))

	require.NoError(t, regToy.Unregister())
	r = collect(t, reader)
	points, _ = r.sum(t, "kvshare.driver.calls")
	assert.Len(t, points, 1)
	assertKit(t, r, mem)
	require.NoError(t, regMem.Unregister())
	assert.Empty(t, collect(t, reader))
}

// stub is a Driver with a name and counters of the test's choosing.
type stub struct {
	name     string
	counters []drivekit.Counter
}

func (s stub) Name() string                                       { return s.name }
func (stub) Stats() drivekit.Stats                                { return drivekit.Stats{} }
func (s stub) Counters(dst []drivekit.Counter) []drivekit.Counter { return append(dst, s.counters...) }

func TestObserveRefusesBadArguments(t *testing.T) {
	mp := noop.NewMeterProvider()
	good := stub{name: "toy"}
	for _, tc := range []struct {
		name  string
		mp    bool
		d     drivermetrics.Driver
		attrs []attribute.KeyValue
	}{
		{name: "no provider", d: good},
		{name: "no driver", mp: true},
		{name: "no name", mp: true, d: stub{}},
		{name: "the driver attribute", mp: true, d: good, attrs: []attribute.KeyValue{attribute.String("driver", "x")}},
		{name: "the direction attribute", mp: true, d: good, attrs: []attribute.KeyValue{attribute.String("direction", "up")}},
		{name: "an attribute twice", mp: true, d: good, attrs: []attribute.KeyValue{attribute.Int("a", 1), attribute.Int("a", 2)}},
		{name: "a counter without a name", mp: true, d: stub{name: "toy", counters: []drivekit.Counter{{Unit: "{x}"}}}},
		{name: "a counter twice", mp: true, d: stub{name: "toy", counters: []drivekit.Counter{{Name: "x"}, {Name: "x", Level: true}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p metric.MeterProvider = mp
			if !tc.mp {
				p = nil
			}
			var err error
			if tc.d == nil {
				_, err = drivermetrics.Observe(p, nil, tc.attrs...)
			} else {
				_, err = drivermetrics.Observe(p, tc.d, tc.attrs...)
			}
			assert.ErrorIs(t, err, telemetry.ErrArgument)
		})
	}
	_, err := drivermetrics.Observe(mp, good)
	assert.NoError(t, err)
}
