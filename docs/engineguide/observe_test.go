package engineguide_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/lender"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/telemetry"
	"github.com/kvshare/kvshare/telemetry/drivermetrics"
)

// guide:observe
// observe exports a lender's figures on the engine's meter provider: the
// backend's, and its driver's when the driver is on the driver kit
// (memdrv, diskdrv, mooncakedrv: the same kvshare.driver.* names, the
// driver's name as an attribute). Every
// instrument is read at collection; nothing is added to the submit
// path. Unregister the registrations before the lender goes.
func observe(provider metric.MeterProvider, name string, l *lender.Lender) ([]metric.Registration, error) {
	lenderAttr := attribute.String("lender", name)
	reg, err := telemetry.Observe(provider, l.Backend, lenderAttr)
	if err != nil {
		return nil, err
	}
	regs := []metric.Registration{reg}
	var kit drivermetrics.Driver
	switch d := l.Backend.Driver().(type) {
	case *mooncakedrv.Driver: // its own Stats shadows the kit's
		kit = d.Driver
	case drivermetrics.Driver:
		kit = d
	}
	if kit != nil {
		reg, err := drivermetrics.Observe(provider, kit, lenderAttr)
		if err != nil {
			return regs, err
		}
		regs = append(regs, reg)
	}
	return regs, nil
}

// guide:end

// The figures of a lender, collected by the OpenTelemetry SDK's manual
// reader (a server would use its Prometheus or OTLP exporter instead).
func Example_metrics() {
	l, err := lend(context.Background(), memdrv.New(memdrv.NewStore(), memdrv.Options{}), binding.Config{KeyPrefix: "engine"}, 8, 4096)
	if err != nil {
		panic(err)
	}
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	regs, err := observe(provider, "publisher", l)
	if err != nil {
		panic(err)
	}
	a, err := publish(l.Backend, requestView(blockHashes(make([]int32, 32), 16), 2, 4))
	if err != nil {
		panic(err)
	}
	<-a.Done()

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch m.Name {
		case "kvshare.rows", "kvshare.lent.bytes", "kvshare.driver.rows":
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				status, hasStatus := p.Attributes.Value("status")
				dir, hasDir := p.Attributes.Value("direction")
				if (!hasStatus || status.AsString() == "ready") && (!hasDir || dir.AsString() == "put") {
					fmt.Printf("%s %s %s: %d\n", m.Name, m.Unit, p.Attributes.Encoded(attribute.DefaultEncoder()), p.Value)
				}
			}
		}
	}
	for _, r := range regs {
		_ = r.Unregister()
	}
	fmt.Println(l.Close(context.Background()))
	// Output:
	// kvshare.rows {row} direction=put,lender=publisher,status=ready: 4
	// kvshare.lent.bytes By lender=publisher: 0
	// kvshare.driver.rows {row} direction=put,driver=memdrv,lender=publisher,status=ready: 4
	// <nil>
}

// printHandler prints the message and the rows of each record, and
// signals each one.
type printHandler struct{ logged chan<- struct{} }

func (printHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h printHandler) Handle(_ context.Context, r slog.Record) error {
	line := r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "rows" {
			line += " rows=" + a.Value.String()
		}
		return true
	})
	fmt.Println(line)
	h.logged <- struct{}{}
	return nil
}
func (h printHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h printHandler) WithGroup(string) slog.Handler      { return h }

// A driver call running past SlowCall is logged, once.
func Example_slowCall() {
	logged := make(chan struct{}, 1)
	driver := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	// guide:slowcall
	cfg := binding.Config{
		KeyPrefix: "engine",
		Logger:    slog.New(printHandler{logged}), // the engine's logger; nil: slog.Default()
		SlowCall:  50 * time.Millisecond,          // 0: binding.DefaultSlowCall (60 s); < 0: off
	}
	// guide:end
	l, err := lend(context.Background(), driver, cfg, 4, 4096)
	if err != nil {
		panic(err)
	}
	gate := driver.Hold(memdrv.PutDir) // the store sits on every put until the gate opens
	a, err := publish(l.Backend, contract.View{Groups: []contract.Group{{Slots: []int32{0, 1}, Names: [][]byte{[]byte("a"), []byte("b")}}}})
	if err != nil {
		panic(err)
	}
	<-logged
	gate.Release()
	<-a.Done()
	fmt.Println(l.Close(context.Background()))
	// Output:
	// WARN kvshare/binding: driver call running long rows=2
	// <nil>
}
