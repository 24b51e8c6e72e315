package mooncake

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/kvshare/kvshare/telemetry/drivermetrics"
	"github.com/kvshare/kvshare/telemetry/internal/observe"
)

// Driver is what the instruments read: a Mooncake driver's kit, whose
// store reports the ledger and SDK counters (keys_left_open,
// rows_declined_left_open, sdk_calls, sdk_panics, sdk_calls_shared,
// parts_unprovable_shared). A *mooncakedrv.Driver's embedded kit is
// one: pass drv.Driver. Stats and Counters are called once per
// collection, on the collecting goroutine.
type Driver = drivermetrics.Driver

// Observe makes the Mooncake driver's legacy instruments on mp's
// kvshare meter (scope telemetry.ScopeName) and registers one callback
// that reads d.Stats() and d.Counters() once per collection. The instruments are listed in the
// telemetry module's README; attrs are added to every observation, as
// with telemetry.Observe (give a driver the attributes of the backend
// over it, so the two line up).
//
// Nothing is added to the driver's path: the callback runs only when a
// reader collects. Unregister the returned registration to stop.
// Errors as for telemetry.Observe: bad arguments wrap
// telemetry.ErrArgument, and so does a driver whose store does not
// report the Mooncake counters.
//
// Deprecated: kept for one release beside drivermetrics.Observe, whose
// kvshare.driver.* instruments carry the same figures for every store;
// use telemetry/drivermetrics.
func Observe(mp metric.MeterProvider, d Driver, attrs ...attribute.KeyValue) (metric.Registration, error) {
	if d == nil {
		return nil, fmt.Errorf("%w: no driver", observe.ErrArgument)
	}
	if err := mooncakeCounters(d); err != nil {
		return nil, err
	}
	base, err := observe.Attributes(attrs)
	if err != nil {
		return nil, err
	}
	m, err := observe.Meter(mp)
	if err != nil {
		return nil, err
	}
	ins, err := newInstruments(m)
	if err != nil {
		return nil, fmt.Errorf("telemetry/mooncake: %w", err)
	}
	view := newView(base)
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		ins.observe(o, view, read(d))
		return nil
	}, ins.all()...)
	if err != nil {
		return nil, fmt.Errorf("telemetry/mooncake: registering the driver's callback: %w", err)
	}
	return reg, nil
}

// mooncakeCounters refuses a driver whose store lacks a counter the
// legacy instruments read.
func mooncakeCounters(d Driver) error {
	have := map[string]bool{}
	for _, c := range d.Counters(nil) {
		have[c.Name] = true
	}
	for _, name := range storeCounters {
		if !have[name] {
			return fmt.Errorf("%w: driver %q is not a Mooncake driver (its store reports no counter %s)", observe.ErrArgument, d.Name(), name)
		}
	}
	return nil
}
