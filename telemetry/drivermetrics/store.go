package drivermetrics

import (
	"fmt"

	"go.opentelemetry.io/otel/metric"

	"github.com/kvshare/kvshare/drivekit"
	"github.com/kvshare/kvshare/telemetry/internal/observe"
)

// storeCounters is the instruments over the store's own counters, made
// from the counters the store reported when observed: one per counter,
// a counter or, for a Level, an up-down counter, in the store's order.
type storeCounters struct {
	totals map[string]metric.Int64ObservableCounter
	levels map[string]metric.Int64ObservableUpDownCounter
	all    []metric.Observable
}

// newStoreCounters makes an instrument for each of cs, named
// StorePrefix + its name, with its unit and description. A counter
// without a name, or a name given twice, is refused.
func newStoreCounters(k *observe.Maker, cs []drivekit.Counter) (*storeCounters, error) {
	sc := &storeCounters{
		totals: map[string]metric.Int64ObservableCounter{},
		levels: map[string]metric.Int64ObservableUpDownCounter{},
	}
	seen := make(map[string]bool, len(cs))
	for _, c := range cs {
		switch {
		case c.Name == "":
			return nil, fmt.Errorf("%w: the store reports a counter without a name", observe.ErrArgument)
		case seen[c.Name]:
			return nil, fmt.Errorf("%w: the store reports counter %q twice", observe.ErrArgument, c.Name)
		}
		seen[c.Name] = true
		spec := observe.Spec{Name: StorePrefix + c.Name, Unit: c.Unit, Description: c.Description}
		if c.Level {
			i := k.UpDownCounter(spec)
			sc.levels[c.Name] = i
			sc.all = append(sc.all, i)
		} else {
			i := k.Counter(spec)
			sc.totals[c.Name] = i
			sc.all = append(sc.all, i)
		}
	}
	return sc, nil
}

// observe records the counters of one snapshot. A counter the store did
// not report when observed has no instrument and is left out; one it
// no longer reports is not observed.
func (sc *storeCounters) observe(o metric.Observer, with metric.ObserveOption, cs []drivekit.Counter) {
	for _, c := range cs {
		if i, ok := sc.totals[c.Name]; ok {
			o.ObserveInt64(i, c.Value, with)
		} else if i, ok := sc.levels[c.Name]; ok {
			o.ObserveInt64(i, c.Value, with)
		}
	}
}
