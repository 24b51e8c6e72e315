package metrics_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/diskdrv"
	"github.com/kvshare/kvshare/drivekit"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
	"github.com/kvshare/kvshare/tools/internal/metrics"
)

// Every driver on the kit, memdrv, diskdrv and mooncakedrv (on the fake
// SDK), is served under the same kvshare_driver_* names with driver=<its
// name>, each figure equal to its kit's Stats, and the store's own
// counters as kvshare_driver_store_*; a Mooncake driver's legacy
// kvshare_mooncake_* names beside them.
func TestEveryDriverServesTheKitsFigures(t *testing.T) {
	e, err := metrics.Serve("127.0.0.1:0")
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Close(context.Background())) }()

	disk, err := diskdrv.Open(t.TempDir(), diskdrv.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, disk.Close()) })
	memDriver := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	diskDriver := diskdrv.New(disk, diskdrv.DriverOptions{})
	mcDriver, err := mooncakedrv.New(fakesdk.New(fakesdk.Options{}).Client(), mooncakedrv.Config{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	lenders := []struct {
		lender string
		driver contract.Driver
		kit    *drivekit.Driver
	}{
		{"memory", memDriver, memDriver.Driver},
		{"disk", diskDriver, diskDriver.Driver},
		{"mooncake", mcDriver, mcDriver.Driver},
	}
	for _, l := range lenders {
		b := backendOver(t, l.driver)
		unregister, err := e.Observe(l.lender, b, l.driver)
		require.NoError(t, err)
		defer func() { require.NoError(t, unregister()) }()
		settle(t, func() (contract.Attempt, error) { return b.Publish(oneGroup("a", "b", "c"), nil) })
		o := settle(t, func() (contract.Attempt, error) { return b.Fetch(oneGroup("a", "absent"), nil) })
		require.Equal(t, []bool{true, false}, o.Delivered, l.lender)
	}

	s := scrapeURL(t, e.URL())
	for _, l := range lenders {
		st := l.kit.Stats()
		labels := []string{"lender", l.lender, "driver", l.kit.Name()}
		for name, want := range map[string]int64{
			"kvshare_driver_ops_open":                st.OpsOpen,
			"kvshare_driver_ops_unprovable":          st.OpsUnprovable,
			"kvshare_driver_rows_unprovable":         st.RowsUnprovable,
			"kvshare_driver_hints_total":             st.Hints,
			"kvshare_driver_parts_total":             st.Parts,
			"kvshare_driver_calls_total":             st.Calls,
			"kvshare_driver_panics_total":            st.Panics,
			"kvshare_driver_calls_shared_total":      st.CallsShared,
			"kvshare_driver_parts_shared_total":      st.PartsShared,
			"kvshare_driver_keys_writing":            st.KeysWriting,
			"kvshare_driver_recycles_total":          st.Recycles,
			"kvshare_driver_ops_recycled_total":      st.OpsRecycled,
			"kvshare_driver_rows_recycled_total":     st.RowsRecycled,
			"kvshare_driver_lookups_total":           st.Lookups,
			"kvshare_driver_lookup_names_total":      st.LookupNames,
			"kvshare_driver_lookups_abandoned_total": st.LookupsAbandoned,
			"kvshare_driver_lookups_refused_total":   st.LookupsRefused,
			"kvshare_driver_lookups_in_store":        st.LookupsInStore,
		} {
			assert.EqualValues(t, want, s.value(t, name, labels...), "%s %s", l.lender, name)
		}
		assert.EqualValues(t, st.PutOps, s.value(t, "kvshare_driver_ops_total", append(labels, "direction", "put")...), l.lender)
		assert.EqualValues(t, st.GetOps, s.value(t, "kvshare_driver_ops_total", append(labels, "direction", "get")...), l.lender)
		for status := contract.Ready; status < contract.RowStatusCount; status++ {
			assert.EqualValues(t, st.PutRows[status], s.value(t, "kvshare_driver_rows_total", append(labels, "direction", "put", "status", status.String())...), "%s %v", l.lender, status)
			assert.EqualValues(t, st.GetRows[status], s.value(t, "kvshare_driver_rows_total", append(labels, "direction", "get", "status", status.String())...), "%s %v", l.lender, status)
		}
		assert.EqualValues(t, 3, s.value(t, "kvshare_driver_rows_total", append(labels, "direction", "put", "status", "ready")...), l.lender)
		for _, c := range l.kit.Counters(nil) {
			name := "kvshare_driver_store_" + c.Name
			if !c.Level {
				name += "_total"
			}
			assert.EqualValues(t, c.Value, s.value(t, name, labels...), "%s %s", l.lender, name)
		}
	}
	assert.NotEmpty(t, mcDriver.Driver.Counters(nil), "the Mooncake store reports counters of its own")

	// The legacy names, a Mooncake lender's only, equal to its Stats.
	ms := mcDriver.Stats()
	mc := []string{"lender", "mooncake"}
	assert.EqualValues(t, ms.Calls, s.value(t, "kvshare_mooncake_sdk_calls_total", mc...))
	assert.EqualValues(t, ms.KeysLeftOpen, s.value(t, "kvshare_mooncake_keys_left_open", mc...))
	assert.EqualValues(t, ms.PutRows[contract.Ready], s.value(t, "kvshare_mooncake_rows_total", append(mc, "direction", "put", "status", "ready")...))
	for _, m := range s["kvshare_mooncake_rows_total"].GetMetric() {
		assert.True(t, hasLabels(m, mc), "only a Mooncake lender has Mooncake figures")
	}
}
