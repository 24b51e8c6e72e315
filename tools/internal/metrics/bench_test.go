package metrics_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/tools/internal/bench"
	"github.com/kvshare/kvshare/tools/internal/metrics"
)

// The benchmark with an endpoint's observer (kvshare bench --metrics):
// before the row-cpu lender is given back, a scrape on loopback serves
// its backend's Stats() and its Mooncake driver's.
func TestBenchServesTheLendersStats(t *testing.T) {
	e, err := metrics.Serve("127.0.0.1:0")
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Close(context.Background())) }()

	observe := e.Observer(func(err error) { t.Errorf("observer: %v", err) })
	seen := 0
	o := bench.Short()
	o.Reps, o.Only = 1, []bench.Measurement{bench.RowCPU}
	o.Observe = func(lender string, b *binding.Backend, d contract.Driver) func() {
		done := observe(lender, b, d)
		return func() {
			st := b.Stats()
			s := scrapeURL(t, e.URL())
			l := []string{"lender", lender}
			assert.Equal(t, "row cpu", lender)
			assert.EqualValues(t, st.Attempts, s.value(t, "kvshare_attempt_started_total", l...))
			assert.EqualValues(t, st.PublishRows[contract.Ready], s.value(t, "kvshare_rows_total", append(l, "direction", "put", "status", "ready")...))
			assert.EqualValues(t, st.FetchRows[contract.Ready], s.value(t, "kvshare_rows_total", append(l, "direction", "get", "status", "ready")...))
			assert.EqualValues(t, st.RowsLent, s.value(t, "kvshare_lent_rows", l...))
			assert.Positive(t, s.value(t, "kvshare_mooncake_sdk_calls_total", l...), "the row-cpu lender runs a Mooncake driver")
			seen++
			done()
		}
	}
	_, err = bench.Run(context.Background(), o, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, seen)
}
