package mooncake_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kvshare/kvshare/telemetry/mooncake"
)

// A Mooncake driver's legacy figures, observed beside its backend's
// (telemetry.Observe) on the same provider. In production the driver is
// a *mooncakedrv.Driver from mooncakedrv.Open and a store.toml, and
// Observe takes its kit: mooncake.Observe(provider, driver.Driver, …);
// here a stand-in reports what its kit and store would.
func ExampleObserve() {
	driver := mooncakeKit()
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	reg, err := mooncake.Observe(provider, driver, attribute.String("lender", "a"))
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
		fmt.Printf("%s %s: %d series\n", m.Name, m.Unit, len(points))
	}
	// Output:
	// kvshare.mooncake.rows {row}: 12 series
	// kvshare.mooncake.keys_left_open {key}: 1 series
	// kvshare.mooncake.rows_declined_left_open {row}: 1 series
	// kvshare.mooncake.rows_unprovable {row}: 1 series
	// kvshare.mooncake.sdk.calls {call}: 1 series
	// kvshare.mooncake.sdk.panics {panic}: 1 series
	// kvshare.mooncake.sdk.calls_shared {call}: 1 series
	// kvshare.mooncake.parts_unprovable_shared {part}: 1 series
	// kvshare.mooncake.recycles {recycle}: 1 series
	// kvshare.mooncake.rows_recycled {row}: 1 series
}
