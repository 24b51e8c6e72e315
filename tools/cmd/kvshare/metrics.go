package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/kvshare/kvshare/tools/internal/metrics"
)

// metricsEndpoint is a command's --metrics endpoint.
type metricsEndpoint struct {
	*metrics.Endpoint
	stderr io.Writer
}

// serveMetrics starts serving at addr and says where on notice.
func serveMetrics(addr string, notice, stderr io.Writer) (*metricsEndpoint, error) {
	e, err := metrics.Serve(addr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(notice, "metrics  %s (Prometheus text, while the command runs)\n", e.URL())
	return &metricsEndpoint{Endpoint: e, stderr: stderr}, nil
}

// warn reports a lender the endpoint could not observe.
func (e *metricsEndpoint) warn(err error) { fmt.Fprintln(e.stderr, "kvshare: --metrics:", err) }

// close stops serving, within a few seconds.
func (e *metricsEndpoint) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.Close(ctx); err != nil {
		e.warn(err)
	}
}
