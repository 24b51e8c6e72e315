package memstore_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/telemetry/memstore"
)

// The embedded store's figures, observed once for every driver made on
// it, beside the backends' (telemetry.Observe) on the same provider.
func ExampleObserve() {
	store, err := memdrv.NewBoundedStore(memdrv.StoreOptions{Capacity: 1 << 20})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	reg, err := memstore.Observe(provider, store, attribute.String("store", "embedded"))
	if err != nil {
		panic(err)
	}
	defer reg.Unregister()

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		points := m.Data.(metricdata.Sum[int64]).DataPoints
		fmt.Printf("%s %s: %d\n", m.Name, m.Unit, points[0].Value)
	}
	// Output:
	// kvshare.memory.capacity By: 1048576
	// kvshare.memory.in_use By: 0
	// kvshare.memory.objects {object}: 0
	// kvshare.memory.object.bytes By: 0
	// kvshare.memory.evictions {object}: 0
	// kvshare.memory.evicted.bytes By: 0
	// kvshare.memory.declines {row}: 0
}
