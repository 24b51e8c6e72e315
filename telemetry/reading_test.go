package telemetry_test

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

// newReader returns a provider whose only reader is the returned manual
// reader: metrics are collected when the test says, never on a timer.
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
		if sm.Scope.Name != telemetry.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// points returns the data points of name, by their attribute set.
func (r reading) points(t *testing.T, name string) map[attribute.Distinct]float64 {
	t.Helper()
	m, ok := r[name]
	require.True(t, ok, "no metric %s in the collection", name)
	out := map[attribute.Distinct]float64{}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			out[p.Attributes.Equivalent()] = float64(p.Value)
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			out[p.Attributes.Equivalent()] = float64(p.Value)
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			out[p.Attributes.Equivalent()] = p.Value
		}
	default:
		t.Fatalf("metric %s: unexpected data %T", name, m.Data)
	}
	return out
}

// value returns the value of name's data point with exactly attrs.
func (r reading) value(t *testing.T, name string, attrs ...attribute.KeyValue) float64 {
	t.Helper()
	set := attribute.NewSet(attrs...)
	v, ok := r.points(t, name)[set.Equivalent()]
	require.True(t, ok, "metric %s has no point with attributes %v", name, set.Encoded(attribute.DefaultEncoder()))
	return v
}
