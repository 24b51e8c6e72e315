package telemetry

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/telemetry/internal/observe"
)

// ScopeName is the instrumentation scope of every kvshare instrument:
// the name of the meter [Observe] (and the subpackages' Observe) make
// them on.
const ScopeName = observe.ScopeName

// ErrArgument is wrapped by every refusal of [Observe]'s arguments: no
// meter provider, no backend, an attribute that is not valid, given
// twice, or keyed "status" or "direction" (the instruments' own).
var ErrArgument = observe.ErrArgument

// Backend is what the instruments read: a backend's counters.
// *binding.Backend, and every [contract.Backend], is one. Stats is called
// once per collection, on the collecting goroutine; it must be safe to
// call then, concurrently with submissions.
type Backend interface {
	Stats() contract.Stats
}

// Observe makes the backend's instruments on mp's kvshare meter (scope
// [ScopeName]) and registers one callback that reads b.Stats() once per
// collection and observes every instrument from that one snapshot. The
// instruments are listed in the module's README; attrs are added to
// every observation (name the backend when a process runs several on one
// provider, e.g. attribute.String("lender", "publisher"): two backends
// observed with the same attributes report into the same series, which
// then mean nothing).
//
// Nothing is added to the backend's submit path: Observe keeps no
// reference to it but in the callback, and the callback runs only when
// a reader collects. Unregister the returned registration to stop
// observing; the instruments stay on the meter (OpenTelemetry has no
// way to remove one) but report nothing for b any more.
//
// Errors wrap [ErrArgument] for bad arguments; an instrument the
// provider refuses, or a callback it does not register, fails Observe
// with nothing registered.
func Observe(mp metric.MeterProvider, b Backend, attrs ...attribute.KeyValue) (metric.Registration, error) {
	if b == nil {
		return nil, fmt.Errorf("%w: no backend", ErrArgument)
	}
	base, err := observe.Attributes(attrs)
	if err != nil {
		return nil, err
	}
	m, err := observe.Meter(mp)
	if err != nil {
		return nil, err
	}
	ins, err := newBackendInstruments(m)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	view := newBackendView(base)
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		ins.observe(o, view, b.Stats())
		return nil
	}, ins.all()...)
	if err != nil {
		return nil, fmt.Errorf("telemetry: registering the backend's callback: %w", err)
	}
	return reg, nil
}
