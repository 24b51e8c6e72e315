package drivermetrics_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kvshare/kvshare/telemetry"
)

// reading is one collection of the kvshare scope: every metric by name.
type reading map[string]metricdata.Metrics

func newReader(t *testing.T) (*sdkmetric.MeterProvider, *sdkmetric.ManualReader) {
	t.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { require.NoError(t, mp.Shutdown(context.Background())) })
	return mp, r
}

func collect(t *testing.T, r *sdkmetric.ManualReader) reading {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	out := reading{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name == telemetry.ScopeName {
			for _, m := range sm.Metrics {
				out[m.Name] = m
			}
		}
	}
	return out
}

// sum returns the int64 sum of name: its data points by attribute set,
// and whether it is monotonic.
func (r reading) sum(t *testing.T, name string) (map[attribute.Distinct]int64, bool) {
	t.Helper()
	m, ok := r[name]
	require.True(t, ok, "no metric %s in the collection", name)
	s, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "metric %s: %T, want an int64 sum", name, m.Data)
	out := map[attribute.Distinct]int64{}
	for _, p := range s.DataPoints {
		out[p.Attributes.Equivalent()] = p.Value
	}
	return out, s.IsMonotonic
}

// value returns the value of name's data point with exactly attrs.
func (r reading) value(t *testing.T, name string, attrs ...attribute.KeyValue) int64 {
	t.Helper()
	points, _ := r.sum(t, name)
	set := attribute.NewSet(attrs...)
	v, ok := points[set.Equivalent()]
	require.True(t, ok, "metric %s has no point with attributes %v", name, attrs)
	return v
}
