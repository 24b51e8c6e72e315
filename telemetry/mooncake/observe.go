package mooncake

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/telemetry/internal/observe"
)

// Driver is what the instruments read: a Mooncake driver's counters.
// *mooncakedrv.Driver is one. Stats is called once per collection, on
// the collecting goroutine.
type Driver interface {
	Stats() mooncakedrv.Stats
}

// Observe makes the Mooncake driver's instruments on mp's kvshare meter
// (scope telemetry.ScopeName) and registers one callback that reads
// d.Stats() once per collection. The instruments are listed in the
// telemetry module's README; attrs are added to every observation, as
// with telemetry.Observe (give a driver the attributes of the backend
// over it, so the two line up).
//
// Nothing is added to the driver's path: the callback runs only when a
// reader collects. Unregister the returned registration to stop.
// Errors as for telemetry.Observe: bad arguments wrap
// telemetry.ErrArgument.
func Observe(mp metric.MeterProvider, d Driver, attrs ...attribute.KeyValue) (metric.Registration, error) {
	if d == nil {
		return nil, fmt.Errorf("%w: no driver", observe.ErrArgument)
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
		ins.observe(o, view, d.Stats())
		return nil
	}, ins.all()...)
	if err != nil {
		return nil, fmt.Errorf("telemetry/mooncake: registering the driver's callback: %w", err)
	}
	return reg, nil
}
