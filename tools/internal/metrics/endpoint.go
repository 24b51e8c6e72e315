package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/telemetry"
	"github.com/kvshare/kvshare/telemetry/drivermetrics"
	"github.com/kvshare/kvshare/telemetry/memstore"
	//lint:ignore SA1019 the kvshare.mooncake.* names are served one release beside kvshare.driver.*
	"github.com/kvshare/kvshare/telemetry/mooncake"
	"github.com/kvshare/kvshare/telemetry/nodemetrics"
)

// Path is where an Endpoint serves the metrics.
const Path = "/metrics"

// Endpoint serves the metrics of the lenders observed on it, in
// Prometheus text format, at Path.
type Endpoint struct {
	ln       net.Listener
	server   *http.Server
	provider *sdkmetric.MeterProvider
	served   chan error

	closeOnce sync.Once
	closeErr  error
}

// Serve listens on addr (host:port; port 0 picks a free one) and serves
// the metrics there until Close.
func Serve(addr string) (*Endpoint, error) {
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry))
	if err != nil {
		return nil, fmt.Errorf("metrics: prometheus exporter: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(Path, promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	e := &Endpoint{
		ln:       ln,
		server:   &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		provider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter)),
		served:   make(chan error, 1),
	}
	go func() { e.served <- e.server.Serve(ln) }()
	return e, nil
}

// URL is the address to scrape: http://host:port/metrics.
func (e *Endpoint) URL() string { return "http://" + e.ln.Addr().String() + Path }

// Provider is the meter provider whose figures the endpoint serves.
func (e *Endpoint) Provider() metric.MeterProvider { return e.provider }

// Observe registers a lender's backend, and its driver's figures when
// the driver is on the driver kit (kvshare.driver.*, with driver=<its
// name>; a Mooncake driver's also under the kvshare.mooncake.* names,
// kept one release), with lender=<name> on every point. The function
// returned unregisters them all.
func (e *Endpoint) Observe(lender string, b telemetry.Backend, d contract.Driver) (unregister func() error, err error) {
	name := attribute.String("lender", lender)
	var regs []metric.Registration
	unregisterAll := func() error {
		var errs []error
		for _, r := range regs {
			errs = append(errs, r.Unregister())
		}
		return errors.Join(errs...)
	}
	observers := []func() (metric.Registration, error){
		func() (metric.Registration, error) { return telemetry.Observe(e.provider, b, name) },
	}
	if kit, ok := kitOf(d); ok {
		observers = append(observers, func() (metric.Registration, error) { return drivermetrics.Observe(e.provider, kit, name) })
	}
	if md, ok := d.(*mooncakedrv.Driver); ok && md != nil {
		//lint:ignore SA1019 the kvshare.mooncake.* names are served one release beside kvshare.driver.*
		observers = append(observers, func() (metric.Registration, error) { return mooncake.Observe(e.provider, md.Driver, name) })
	}
	for _, observe := range observers {
		reg, err := observe()
		if err != nil {
			return nil, errors.Join(err, unregisterAll())
		}
		regs = append(regs, reg)
	}
	return unregisterAll, nil
}

// ObserveStore registers the embedded store's figures, with
// store=<name> on every point: once for the store, whose drivers every
// lender over it shares. The function returned unregisters them.
func (e *Endpoint) ObserveStore(name string, s memstore.Store) (unregister func() error, err error) {
	reg, err := memstore.Observe(e.provider, s, attribute.String("store", name))
	if err != nil {
		return nil, err
	}
	return reg.Unregister, nil
}

// ObserveNode registers a node's figures, with node=<name> on every
// point (each engine's also with engine=<the name it declared>). The
// function returned unregisters them.
func (e *Endpoint) ObserveNode(name string, n nodemetrics.Node) (unregister func() error, err error) {
	reg, err := nodemetrics.Observe(e.provider, n, attribute.String("node", name))
	if err != nil {
		return nil, err
	}
	return reg.Unregister, nil
}

// Close stops serving, within ctx, and shuts the provider down. Later
// calls return the first one's answer.
func (e *Endpoint) Close(ctx context.Context) error {
	e.closeOnce.Do(func() {
		err := e.server.Shutdown(ctx)
		if serr := <-e.served; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		e.closeErr = errors.Join(err, e.provider.Shutdown(ctx))
	})
	return e.closeErr
}

// Observer returns a hook for roundtrip.Config.Observe and
// bench.Options.Observe: it observes each lender from when its backend
// is built until the done function it returns is called. An error
// (which a valid lender name never causes) goes to onError, and that
// lender is not observed.
func (e *Endpoint) Observer(onError func(error)) func(lender string, b *binding.Backend, d contract.Driver) (done func()) {
	return func(lender string, b *binding.Backend, d contract.Driver) func() {
		unregister, err := e.Observe(lender, b, d)
		if err != nil {
			onError(fmt.Errorf("metrics: lender %s: %w", lender, err))
			return func() {}
		}
		return func() {
			if err := unregister(); err != nil {
				onError(fmt.Errorf("metrics: lender %s: %w", lender, err))
			}
		}
	}
}
