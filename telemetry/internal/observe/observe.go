// Package observe holds what kvshare's instrument sets (the backend's in
// package telemetry, a kit driver's in telemetry/drivermetrics, …) share:
// the meter they are made on, the check of the attributes a caller adds
// to every observation, and the making of a set's instruments.
package observe

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// ScopeName is the instrumentation scope of every kvshare instrument: the
// name of the meter they are made on.
const ScopeName = "github.com/kvshare/kvshare/telemetry"

// Reserved attribute keys: the instruments' own. A caller's attribute
// may not use them, or its value would be overwritten.
const (
	Status    attribute.Key = "status"
	Direction attribute.Key = "direction"
)

// ErrArgument is wrapped by every refusal of a caller's arguments.
var ErrArgument = errors.New("telemetry: bad argument")

// Meter returns the meter kvshare's instruments are made on.
func Meter(mp metric.MeterProvider) (metric.Meter, error) {
	if mp == nil {
		return nil, fmt.Errorf("%w: no meter provider", ErrArgument)
	}
	return mp.Meter(ScopeName), nil
}

// Attributes checks the caller's attributes: each valid, none with a
// reserved key, no key twice. It returns a copy.
func Attributes(attrs []attribute.KeyValue) ([]attribute.KeyValue, error) {
	seen := make(map[attribute.Key]bool, len(attrs))
	for _, kv := range attrs {
		switch {
		case !kv.Valid():
			return nil, fmt.Errorf("%w: attribute %q is not valid (empty key or no value)", ErrArgument, kv.Key)
		case kv.Key == Status || kv.Key == Direction:
			return nil, fmt.Errorf("%w: attribute %q is the instruments' own", ErrArgument, kv.Key)
		case seen[kv.Key]:
			return nil, fmt.Errorf("%w: attribute %q given twice", ErrArgument, kv.Key)
		}
		seen[kv.Key] = true
	}
	return append([]attribute.KeyValue(nil), attrs...), nil
}

// With returns the observe option of the caller's attributes plus more,
// built once so that a collection allocates no attribute set.
func With(base []attribute.KeyValue, more ...attribute.KeyValue) metric.ObserveOption {
	all := make([]attribute.KeyValue, 0, len(base)+len(more))
	all = append(append(all, base...), more...)
	return metric.WithAttributeSet(attribute.NewSet(all...))
}

// Spec names and describes one instrument.
type Spec struct {
	Name, Unit, Description string
}

// Maker makes a set's instruments on one meter, collecting every error,
// so that a set is made whole or refused whole.
type Maker struct {
	m    metric.Meter
	errs []error
}

// NewMaker returns a Maker over m.
func NewMaker(m metric.Meter) *Maker { return &Maker{m: m} }

func (k *Maker) keep(name string, err error) {
	if err != nil {
		k.errs = append(k.errs, fmt.Errorf("instrument %s: %w", name, err))
	}
}

// Counter makes an observable int64 counter: a total that only grows.
func (k *Maker) Counter(s Spec) metric.Int64ObservableCounter {
	i, err := k.m.Int64ObservableCounter(s.Name, metric.WithUnit(s.Unit), metric.WithDescription(s.Description))
	k.keep(s.Name, err)
	return i
}

// UpDownCounter makes an observable int64 up-down counter: a level that
// adds up across attribute sets (rows lent by each backend, say).
func (k *Maker) UpDownCounter(s Spec) metric.Int64ObservableUpDownCounter {
	i, err := k.m.Int64ObservableUpDownCounter(s.Name, metric.WithUnit(s.Unit), metric.WithDescription(s.Description))
	k.keep(s.Name, err)
	return i
}

// Gauge makes an observable int64 gauge: a value that does not add up.
func (k *Maker) Gauge(s Spec) metric.Int64ObservableGauge {
	i, err := k.m.Int64ObservableGauge(s.Name, metric.WithUnit(s.Unit), metric.WithDescription(s.Description))
	k.keep(s.Name, err)
	return i
}

// FloatGauge makes an observable float64 gauge.
func (k *Maker) FloatGauge(s Spec) metric.Float64ObservableGauge {
	i, err := k.m.Float64ObservableGauge(s.Name, metric.WithUnit(s.Unit), metric.WithDescription(s.Description))
	k.keep(s.Name, err)
	return i
}

// Err returns every error met so far, joined, or nil.
func (k *Maker) Err() error { return errors.Join(k.errs...) }
