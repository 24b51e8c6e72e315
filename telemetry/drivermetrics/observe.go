package drivermetrics

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/kvshare/kvshare/drivekit"
	"github.com/kvshare/kvshare/telemetry/internal/observe"
)

// Driver is what the instruments read: a kit driver's counters.
// *drivekit.Driver is one (a driver on the kit embeds it: pass
// drv.Driver). Name is read once, by Observe; Stats and Counters once
// per collection, on the collecting goroutine.
type Driver interface {
	Name() string
	Stats() drivekit.Stats
	Counters(dst []drivekit.Counter) []drivekit.Counter
}

// DriverKey is the attribute every point carries: the driver's name
// (Driver.Name: "memdrv", "diskdrv", "mooncakedrv", "redisdrv"), which
// tells the stores apart under the same instrument names.
const DriverKey attribute.Key = "driver"

// Observe makes the kit's instruments, and one for each of the store's
// own counters, on mp's kvshare meter (scope telemetry.ScopeName) and
// registers one callback that reads d.Stats() and d.Counters() once per
// collection. The instruments are listed in the telemetry module's
// README; every point carries DriverKey = d.Name() and attrs (give a
// driver the attributes of the backend over it, so the two line up);
// none of attrs may be keyed DriverKey, "direction" or "status".
//
// The store's counters are those d.Counters reports now (a store
// reports the same ones, in the same order, for its life).
//
// Nothing is added to the driver's path: the callback runs only when a
// reader collects. Unregister the returned registration to stop.
// Errors as for telemetry.Observe: bad arguments wrap
// telemetry.ErrArgument.
func Observe(mp metric.MeterProvider, d Driver, attrs ...attribute.KeyValue) (metric.Registration, error) {
	if d == nil {
		return nil, fmt.Errorf("%w: no driver", observe.ErrArgument)
	}
	for _, kv := range attrs {
		if kv.Key == DriverKey {
			return nil, fmt.Errorf("%w: attribute %q is the instruments' own", observe.ErrArgument, kv.Key)
		}
	}
	base, err := observe.Attributes(attrs)
	if err != nil {
		return nil, err
	}
	name := d.Name()
	if name == "" {
		return nil, fmt.Errorf("%w: the driver has no name", observe.ErrArgument)
	}
	base = append(base, DriverKey.String(name))
	m, err := observe.Meter(mp)
	if err != nil {
		return nil, err
	}
	k := observe.NewMaker(m)
	ins := newKit(k)
	store, err := newStoreCounters(k, d.Counters(nil))
	if err != nil {
		return nil, fmt.Errorf("telemetry/drivermetrics: driver %s: %w", name, err)
	}
	if err := k.Err(); err != nil {
		return nil, fmt.Errorf("telemetry/drivermetrics: driver %s: %w", name, err)
	}
	view := newView(base)
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s := d.Stats()
		ins.observe(o, view, &s)
		store.observe(o, view.plain, d.Counters(nil))
		return nil
	}, append(ins.all(), store.all...)...)
	if err != nil {
		return nil, fmt.Errorf("telemetry/drivermetrics: registering driver %s's callback: %w", name, err)
	}
	return reg, nil
}
