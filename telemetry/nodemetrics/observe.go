package nodemetrics

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/kvshare/kvshare/node"
	"github.com/kvshare/kvshare/telemetry/internal/observe"
)

// Node is what the instruments read: a node's figures. *node.Node is
// one. Stats is called once per collection, on the collecting
// goroutine.
type Node interface {
	Stats() node.Stats
}

// The attribute keys of the instruments' own series.
const (
	// Engine keys the per-engine instruments: the name an engine
	// declared in its hello.
	Engine attribute.Key = "engine"
	// Tenant keys the per-tenant instruments: the tenant a scope
	// declared ("" for none), as the node's configuration admitted it.
	Tenant attribute.Key = "tenant"
	// Limit keys the tenant refusals by the limit that refused them
	// (node.LimitLentBytes, …).
	Limit attribute.Key = "limit"
)

// Observe makes the node's instruments on mp's kvshare meter (scope
// telemetry.ScopeName) and registers one callback that reads n.Stats()
// once per collection. attrs are added to every observation (name the
// node when a process runs several); none may be keyed [Engine],
// [Tenant] or [Limit].
//
// Nothing is added to the node's path: the callback runs only when a
// reader collects. Unregister the returned registration to stop.
// Errors as for telemetry.Observe: bad arguments wrap
// telemetry.ErrArgument.
func Observe(mp metric.MeterProvider, n Node, attrs ...attribute.KeyValue) (metric.Registration, error) {
	if n == nil {
		return nil, fmt.Errorf("%w: no node", observe.ErrArgument)
	}
	for _, kv := range attrs {
		if kv.Key == Engine || kv.Key == Tenant || kv.Key == Limit {
			return nil, fmt.Errorf("%w: attribute %q is the instruments' own", observe.ErrArgument, kv.Key)
		}
	}
	base, err := observe.Attributes(attrs)
	if err != nil {
		return nil, err
	}
	m, err := observe.Meter(mp)
	if err != nil {
		return nil, err
	}
	k := observe.NewMaker(m)
	is := makeInstruments(k)
	if err := k.Err(); err != nil {
		return nil, fmt.Errorf("telemetry/nodemetrics: %w", err)
	}
	with := observe.With(base)
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		is.observe(o, n.Stats(), base, with)
		return nil
	}, is.all()...)
	if err != nil {
		return nil, fmt.Errorf("telemetry/nodemetrics: registering the node's callback: %w", err)
	}
	return reg, nil
}
