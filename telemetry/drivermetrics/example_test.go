package drivermetrics_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/telemetry/drivermetrics"
)

// A memdrv driver's figures, under the names every driver on the kit
// exports, its name on every point. For a driver whose own Stats
// shadows the kit's (mooncakedrv), pass its kit: driver.Driver.
func ExampleObserve() {
	driver := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	defer driver.Close()
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	reg, err := drivermetrics.Observe(provider, driver.Driver, attribute.String("lender", "a"))
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
		driverName, _ := points[0].Attributes.Value(drivermetrics.DriverKey)
		fmt.Printf("%s %s: %d series, driver=%s\n", m.Name, m.Unit, len(points), driverName.AsString())
	}
	// Output:
	// kvshare.driver.ops {operation}: 2 series, driver=memdrv
	// kvshare.driver.rows {row}: 12 series, driver=memdrv
	// kvshare.driver.hints {operation}: 1 series, driver=memdrv
	// kvshare.driver.parts {part}: 1 series, driver=memdrv
	// kvshare.driver.calls {call}: 1 series, driver=memdrv
	// kvshare.driver.panics {panic}: 1 series, driver=memdrv
	// kvshare.driver.calls_shared {call}: 1 series, driver=memdrv
	// kvshare.driver.parts_shared {part}: 1 series, driver=memdrv
	// kvshare.driver.recycles {recycle}: 1 series, driver=memdrv
	// kvshare.driver.ops_recycled {operation}: 1 series, driver=memdrv
	// kvshare.driver.rows_recycled {row}: 1 series, driver=memdrv
	// kvshare.driver.lookups {lookup}: 1 series, driver=memdrv
	// kvshare.driver.lookup_names {name}: 1 series, driver=memdrv
	// kvshare.driver.lookups_abandoned {lookup}: 1 series, driver=memdrv
	// kvshare.driver.lookups_refused {lookup}: 1 series, driver=memdrv
	// kvshare.driver.ops_open {operation}: 1 series, driver=memdrv
	// kvshare.driver.ops_unprovable {operation}: 1 series, driver=memdrv
	// kvshare.driver.rows_unprovable {row}: 1 series, driver=memdrv
	// kvshare.driver.keys_writing {key}: 1 series, driver=memdrv
	// kvshare.driver.lookups_in_store {lookup}: 1 series, driver=memdrv
}
