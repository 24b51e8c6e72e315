package nodemetrics_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/node"
	"github.com/kvshare/kvshare/telemetry/nodemetrics"
)

// A node's figures, observed once for the node; each engine attached
// would add its own series, labelled by the name it declared.
func ExampleObserve() {
	drv := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	defer drv.Close()
	n, err := node.New(node.Config{Driver: drv})
	if err != nil {
		panic(err)
	}
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	reg, err := nodemetrics.Observe(provider, n, attribute.String("node", "gpu-host-1"))
	if err != nil {
		panic(err)
	}
	defer reg.Unregister()

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if points := m.Data.(metricdata.Sum[int64]).DataPoints; len(points) > 0 {
			fmt.Printf("%s %s: %d\n", m.Name, m.Unit, points[0].Value)
		}
	}
	// Output:
	// kvshare.node.engines {engine}: 0
	// kvshare.node.lends {lend}: 0
	// kvshare.node.lent.bytes By: 0
	// kvshare.node.attempt.open {attempt}: 0
	// kvshare.node.held.lends {lend}: 0
	// kvshare.node.held.bytes By: 0
	// kvshare.node.attached {session}: 0
	// kvshare.node.attach.refused {connection}: 0
	// kvshare.node.attempts {attempt}: 0
	// kvshare.node.refusals {request}: 0
	// kvshare.node.reclaims {reclaim}: 0
	// kvshare.node.reclaim.bytes By: 0
}
