package telemetry_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/telemetry"
)

// spyLog records every call made into the metric API.
type spyLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *spyLog) add(call string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, call)
}

func (l *spyLog) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

// spyProvider is a meter provider that records what is asked of it and
// otherwise does nothing (noop's instruments).
type spyProvider struct {
	embedded.MeterProvider
	log *spyLog
}

func (p spyProvider) Meter(name string, _ ...metric.MeterOption) metric.Meter {
	p.log.add("Meter " + name)
	return spyMeter{Meter: noop.Meter{}, log: p.log}
}

// spyMeter records every instrument made, by kind: "sync" for those a
// caller records into on its own path, "observable" for those read by a
// callback at collection.
type spyMeter struct {
	metric.Meter
	log *spyLog
}

func (m spyMeter) Int64Counter(n string, o ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	m.log.add("sync " + n)
	return m.Meter.Int64Counter(n, o...)
}

func (m spyMeter) Int64UpDownCounter(n string, o ...metric.Int64UpDownCounterOption) (metric.Int64UpDownCounter, error) {
	m.log.add("sync " + n)
	return m.Meter.Int64UpDownCounter(n, o...)
}

func (m spyMeter) Int64Histogram(n string, o ...metric.Int64HistogramOption) (metric.Int64Histogram, error) {
	m.log.add("sync " + n)
	return m.Meter.Int64Histogram(n, o...)
}

func (m spyMeter) Int64Gauge(n string, o ...metric.Int64GaugeOption) (metric.Int64Gauge, error) {
	m.log.add("sync " + n)
	return m.Meter.Int64Gauge(n, o...)
}

func (m spyMeter) Float64Counter(n string, o ...metric.Float64CounterOption) (metric.Float64Counter, error) {
	m.log.add("sync " + n)
	return m.Meter.Float64Counter(n, o...)
}

func (m spyMeter) Float64UpDownCounter(n string, o ...metric.Float64UpDownCounterOption) (metric.Float64UpDownCounter, error) {
	m.log.add("sync " + n)
	return m.Meter.Float64UpDownCounter(n, o...)
}

func (m spyMeter) Float64Histogram(n string, o ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	m.log.add("sync " + n)
	return m.Meter.Float64Histogram(n, o...)
}

func (m spyMeter) Float64Gauge(n string, o ...metric.Float64GaugeOption) (metric.Float64Gauge, error) {
	m.log.add("sync " + n)
	return m.Meter.Float64Gauge(n, o...)
}

func (m spyMeter) Int64ObservableCounter(n string, o ...metric.Int64ObservableCounterOption) (metric.Int64ObservableCounter, error) {
	m.log.add("observable " + n)
	return m.Meter.Int64ObservableCounter(n, o...)
}

func (m spyMeter) Int64ObservableUpDownCounter(n string, o ...metric.Int64ObservableUpDownCounterOption) (metric.Int64ObservableUpDownCounter, error) {
	m.log.add("observable " + n)
	return m.Meter.Int64ObservableUpDownCounter(n, o...)
}

func (m spyMeter) Int64ObservableGauge(n string, o ...metric.Int64ObservableGaugeOption) (metric.Int64ObservableGauge, error) {
	m.log.add("observable " + n)
	return m.Meter.Int64ObservableGauge(n, o...)
}

func (m spyMeter) Float64ObservableCounter(n string, o ...metric.Float64ObservableCounterOption) (metric.Float64ObservableCounter, error) {
	m.log.add("observable " + n)
	return m.Meter.Float64ObservableCounter(n, o...)
}

func (m spyMeter) Float64ObservableUpDownCounter(n string, o ...metric.Float64ObservableUpDownCounterOption) (metric.Float64ObservableUpDownCounter, error) {
	m.log.add("observable " + n)
	return m.Meter.Float64ObservableUpDownCounter(n, o...)
}

func (m spyMeter) Float64ObservableGauge(n string, o ...metric.Float64ObservableGaugeOption) (metric.Float64ObservableGauge, error) {
	m.log.add("observable " + n)
	return m.Meter.Float64ObservableGauge(n, o...)
}

func (m spyMeter) RegisterCallback(f metric.Callback, ins ...metric.Observable) (metric.Registration, error) {
	m.log.add("callback")
	return m.Meter.RegisterCallback(f, ins...)
}

// Nothing is added to the submit path: Observe makes observable
// instruments only, with one callback, and a publish and a fetch through
// the observed backend make no call into the metric API at all.
func TestSubmitPathMakesNoMetricCall(t *testing.T) {
	log := &spyLog{}
	l := newLender(t, memdrv.NewStore())
	reg, err := telemetry.Observe(spyProvider{log: log}, l.backend)
	require.NoError(t, err)
	made := log.snapshot()
	require.NotEmpty(t, made)
	assert.Equal(t, "Meter "+telemetry.ScopeName, made[0])
	assert.Equal(t, "callback", made[len(made)-1])
	for _, call := range made[1 : len(made)-1] {
		assert.Regexp(t, `^observable kvshare\.`, call)
	}

	a, err := l.backend.Publish(view(0, "p0", "p1"), nil)
	require.NoError(t, err)
	quiesced(t, a)
	a, err = l.backend.Fetch(view(2, "p0", "p1"), nil)
	require.NoError(t, err)
	assert.Equal(t, 2, quiesced(t, a).Prefix())
	assert.Equal(t, made, log.snapshot(), "no metric call on the submit path")
	require.NoError(t, reg.Unregister())
}
