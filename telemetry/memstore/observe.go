package memstore

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/telemetry/internal/observe"
)

// Store is what the instruments read: a store's figures. *memdrv.Store
// is one. Stats is called once per collection, on the collecting
// goroutine.
type Store interface {
	Stats() memdrv.StoreStats
}

// The store's instruments, as the telemetry README lists them.
var (
	specCapacity = observe.Spec{Name: "kvshare.memory.capacity", Unit: "By",
		Description: "Memory the bounded store took up front (0 for a store on the heap without a cap)."}
	specInUse = observe.Spec{Name: "kvshare.memory.in_use", Unit: "By",
		Description: "Memory of the bounded store's chunks held now: by objects, puts under way and dropped objects a get still reads."}
	specObjects = observe.Spec{Name: "kvshare.memory.objects", Unit: "{object}",
		Description: "Complete objects in the store."}
	specObjectBytes = observe.Spec{Name: "kvshare.memory.object.bytes", Unit: "By",
		Description: "Bytes of the complete objects in the store."}
	specEvictions = observe.Spec{Name: "kvshare.memory.evictions", Unit: "{object}",
		Description: "Objects evicted (the least recently used) to make room for a put."}
	specEvictedBytes = observe.Spec{Name: "kvshare.memory.evicted.bytes", Unit: "By",
		Description: "Bytes of the objects evicted."}
	specDeclines = observe.Spec{Name: "kvshare.memory.declines", Unit: "{row}",
		Description: "Driver puts the store declined: no room to be made (the object larger than the capacity, or fitting only by evicting objects being read or written), or the store full or closed."}
)

// Observe makes the store's instruments on mp's kvshare meter (scope
// telemetry.ScopeName) and registers one callback that reads s.Stats()
// once per collection. attrs are added to every observation (name the
// store when a process runs several).
//
// Nothing is added to the store's path: the callback runs only when a
// reader collects. Unregister the returned registration to stop.
// Errors as for telemetry.Observe: bad arguments wrap
// telemetry.ErrArgument.
func Observe(mp metric.MeterProvider, s Store, attrs ...attribute.KeyValue) (metric.Registration, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: no store", observe.ErrArgument)
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
	capacity, inUse := k.UpDownCounter(specCapacity), k.UpDownCounter(specInUse)
	objects, objectBytes := k.UpDownCounter(specObjects), k.UpDownCounter(specObjectBytes)
	evictions, evictedBytes, declines := k.Counter(specEvictions), k.Counter(specEvictedBytes), k.Counter(specDeclines)
	if err := k.Err(); err != nil {
		return nil, fmt.Errorf("telemetry/memstore: %w", err)
	}
	with := observe.With(base)
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := s.Stats()
		o.ObserveInt64(capacity, st.Capacity, with)
		o.ObserveInt64(inUse, st.InUse, with)
		o.ObserveInt64(objects, st.Objects, with)
		o.ObserveInt64(objectBytes, st.Bytes, with)
		o.ObserveInt64(evictions, st.Evictions, with)
		o.ObserveInt64(evictedBytes, st.EvictedBytes, with)
		o.ObserveInt64(declines, st.Declines, with)
		return nil
	}, capacity, inUse, objects, objectBytes, evictions, evictedBytes, declines)
	if err != nil {
		return nil, fmt.Errorf("telemetry/memstore: registering the store's callback: %w", err)
	}
	return reg, nil
}
