package mooncake_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
	"github.com/kvshare/kvshare/telemetry"
	"github.com/kvshare/kvshare/telemetry/mooncake"
)

// kit is a Mooncake driver's kit as the instruments see it: the kit's
// Stats and the counters mooncakedrv's store reports, by their names.
type kit struct {
	stats    drivekit.Stats
	counters map[string]int64
	level    map[string]bool
}

func (kit) Name() string            { return "mooncakedrv" }
func (k kit) Stats() drivekit.Stats { return k.stats }
func (k kit) Counters(dst []drivekit.Counter) []drivekit.Counter {
	for _, name := range []string{"keys_left_open", "rows_declined_left_open", "sdk_calls", "sdk_panics", "sdk_calls_shared", "parts_unprovable_shared"} {
		if v, ok := k.counters[name]; ok {
			dst = append(dst, drivekit.Counter{Name: name, Unit: "{x}", Description: "x", Level: k.level[name], Value: v})
		}
	}
	return dst
}

func mooncakeKit() kit {
	k := kit{
		stats: drivekit.Stats{RowsUnprovable: 3, Recycles: 4, RowsRecycled: 5, Panics: 2, Calls: 99, CallsShared: 98},
		counters: map[string]int64{"keys_left_open": 11, "rows_declined_left_open": 12, "sdk_calls": 13,
			"sdk_panics": 14, "sdk_calls_shared": 15, "parts_unprovable_shared": 16},
		level: map[string]bool{"keys_left_open": true},
	}
	for st := contract.Ready; st < contract.RowStatusCount; st++ {
		k.stats.PutRows[st] = int64(100 + st)
		k.stats.GetRows[st] = int64(200 + st)
	}
	return k
}

func row(dir contract.Direction, s contract.RowStatus) []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String("direction", dir.String()), attribute.String("status", s.String())}
}

// Each legacy figure is read where mooncakedrv.Stats took it from: rows,
// unprovable rows and recycles from the kit; the ledger and the SDK
// calls from the store's counters (the SDK's panics: the store's plus
// the kit's); with the names, units and kinds of the releases before.
func TestLegacyFiguresFromTheKitAndTheStore(t *testing.T) {
	mp, reader := newReader(t)
	k := mooncakeKit()
	lenderAttr := attribute.String("lender", "a")
	reg, err := mooncake.Observe(mp, k, lenderAttr)
	require.NoError(t, err)
	defer func() { require.NoError(t, reg.Unregister()) }()
	r := collect(t, reader)

	for d, byStatus := range map[contract.Direction][contract.RowStatusCount]int64{contract.PutDir: k.stats.PutRows, contract.GetDir: k.stats.GetRows} {
		for st := contract.Ready; st < contract.RowStatusCount; st++ {
			assert.Equal(t, byStatus[st], r.value(t, "kvshare.mooncake.rows", append(row(d, st), lenderAttr)...), "%v %v", d, st)
		}
	}
	rows, _ := r.sum(t, "kvshare.mooncake.rows")
	assert.Len(t, rows, 2*int(contract.RowStatusCount-1), "both directions, every final status")

	type legacy struct {
		value     int64
		unit      string
		monotonic bool
	}
	want := map[string]legacy{
		"kvshare.mooncake.keys_left_open":          {11, "{key}", false},
		"kvshare.mooncake.rows_declined_left_open": {12, "{row}", true},
		"kvshare.mooncake.rows_unprovable":         {3, "{row}", false},
		"kvshare.mooncake.sdk.calls":               {13, "{call}", true},
		"kvshare.mooncake.sdk.panics":              {14 + 2, "{panic}", true},
		"kvshare.mooncake.sdk.calls_shared":        {15, "{call}", true},
		"kvshare.mooncake.parts_unprovable_shared": {16, "{part}", true},
		"kvshare.mooncake.recycles":                {4, "{recycle}", true},
		"kvshare.mooncake.rows_recycled":           {5, "{row}", true},
	}
	assert.Len(t, r, len(want)+1, "the legacy instruments and no others")
	for name, w := range want {
		assert.Equal(t, w.value, r.value(t, name, lenderAttr), name)
		_, monotonic := r.sum(t, name)
		assert.Equal(t, w.unit, r[name].Unit, name)
		assert.Equal(t, w.monotonic, monotonic, name)
		assert.NotEmpty(t, r[name].Description, name)
	}
	assert.Equal(t, "{row}", r["kvshare.mooncake.rows"].Unit)
}

func TestObserveRefusesBadArguments(t *testing.T) {
	mp := noop.NewMeterProvider()
	_, err := mooncake.Observe(mp, nil)
	assert.ErrorIs(t, err, telemetry.ErrArgument)
	_, err = mooncake.Observe(nil, mooncakeKit())
	assert.ErrorIs(t, err, telemetry.ErrArgument)
	_, err = mooncake.Observe(mp, mooncakeKit(), attribute.String("direction", "up"))
	assert.ErrorIs(t, err, telemetry.ErrArgument)
	// A driver whose store lacks one of the Mooncake counters is not a
	// Mooncake driver.
	for name := range mooncakeKit().counters {
		k := mooncakeKit()
		delete(k.counters, name)
		_, err = mooncake.Observe(mp, k)
		assert.ErrorIs(t, err, telemetry.ErrArgument, "no %s", name)
	}
}
