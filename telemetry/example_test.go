package telemetry_test

import (
	"context"
	"fmt"
	"sort"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/telemetry"
)

type exampleHold struct{}

func (exampleHold) Release() {}

// A backend's figures, observed on a provider the engine already runs
// (here the SDK's with a manual reader; in a server, the Prometheus or
// OTLP exporter's). Collection reads Stats() once; submitting reads
// nothing.
func ExampleObserve() {
	mem, err := memdrv.Alloc(4096, 4, contract.Host)
	if err != nil {
		panic(err)
	}
	driver := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	regions, err := binding.Bind(driver, []contract.SlotRegion{mem.Region}, exampleHold{})
	if err != nil {
		panic(err)
	}
	backend, err := binding.New(regions, binding.Config{KeyPrefix: "example"})
	if err != nil {
		panic(err)
	}

	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	reg, err := telemetry.Observe(provider, backend, attribute.String("lender", "a"))
	if err != nil {
		panic(err)
	}
	defer reg.Unregister()

	a, err := backend.Publish(contract.View{Groups: []contract.Group{
		{Slots: []int32{0, 1}, Names: [][]byte{[]byte("block-0"), []byte("block-1")}},
	}}, nil)
	if err != nil {
		panic(err)
	}
	<-a.Done()

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	var lines []string
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if sum, ok := m.Data.(metricdata.Sum[int64]); ok {
			for _, p := range sum.DataPoints {
				if p.Value != 0 {
					lines = append(lines, fmt.Sprintf("%s %s {%s} = %d", m.Name, m.Unit, p.Attributes.Encoded(attribute.DefaultEncoder()), p.Value))
				}
			}
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}

	// The owner's cleanup order: Shutdown answers no labels, then the
	// driver is closed, then the memory freed.
	if held := backend.Shutdown(context.Background()); len(held) == 0 {
		_ = driver.Close()
		_ = mem.Free()
	}
	// Output:
	// kvshare.attempt.started {attempt} {lender=a} = 1
	// kvshare.rows {row} {direction=put,lender=a,status=ready} = 2
}
