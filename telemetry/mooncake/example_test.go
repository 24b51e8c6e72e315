package mooncake_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
	"github.com/kvshare/kvshare/telemetry/mooncake"
)

// A Mooncake driver's ledger and row counts, observed beside its
// backend's figures (telemetry.Observe) on the same provider. The
// driver here runs on the in-memory fake store; in production it comes
// from mooncakedrv.Open and a store.toml.
func ExampleObserve() {
	driver, err := mooncakedrv.New(fakesdk.New(fakesdk.Options{}).Client(), mooncakedrv.Config{})
	if err != nil {
		panic(err)
	}
	defer func() {
		if driver.Drain(context.Background()) {
			_ = driver.Close()
		}
	}()
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
