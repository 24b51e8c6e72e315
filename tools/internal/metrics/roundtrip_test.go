package metrics_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/tools/internal/metrics"
	"github.com/kvshare/kvshare/tools/internal/roundtrip"
)

// The round trip with an endpoint's observer (what kvshare roundtrip
// --metrics runs): at the end of the run, before each lender closes, a
// scrape on loopback serves that lender's Stats().
func TestRoundTripServesEachLendersStats(t *testing.T) {
	e, err := metrics.Serve("127.0.0.1:0")
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Close(context.Background())) }()

	var mu sync.Mutex
	checked := map[string]contract.Stats{}
	observe := e.Observer(func(err error) { t.Errorf("observer: %v", err) })
	cfg := roundtrip.Defaults()
	cfg.Rows, cfg.RowBytes, cfg.ViewRows, cfg.Workers = 48, 4096, 16, 1
	cfg.Observe = func(lender string, b *binding.Backend, d contract.Driver) func() {
		done := observe(lender, b, d)
		return func() {
			// Every attempt has quiesced: Stats() holds still.
			st := b.Stats()
			s := scrapeURL(t, e.URL())
			l := []string{"lender", lender}
			assert.EqualValues(t, st.Attempts, s.value(t, "kvshare_attempt_started_total", l...), lender)
			assert.EqualValues(t, st.PublishRows[contract.Ready], s.value(t, "kvshare_rows_total", append(l, "direction", "put", "status", "ready")...), lender)
			assert.EqualValues(t, st.FetchRows[contract.Ready], s.value(t, "kvshare_rows_total", append(l, "direction", "get", "status", "ready")...), lender)
			assert.EqualValues(t, st.AttemptsOpen, s.value(t, "kvshare_attempt_open", l...), lender)
			assert.EqualValues(t, st.RowsLent, s.value(t, "kvshare_lent_rows", l...), lender)
			assert.EqualValues(t, st.BytesLent, s.value(t, "kvshare_lent_bytes", l...), lender)
			assert.EqualValues(t, st.CallsUnprovable, s.value(t, "kvshare_call_unprovable", l...), lender)
			assert.Equal(t, st, b.Stats(), "nothing moved during the scrape")
			mu.Lock()
			checked[lender] = st
			mu.Unlock()
			done()
		}
	}
	rep, err := roundtrip.Run(context.Background(), cfg, nil)
	require.NoError(t, err)
	require.True(t, rep.OK())
	require.Len(t, checked, 2)
	assert.EqualValues(t, 48, checked["publisher"].Rows[contract.Ready])
	assert.EqualValues(t, 48, checked["fetcher"].Rows[contract.Ready])
	assert.EqualValues(t, 3, checked["fetcher"].Attempts)

	s := scrapeURL(t, e.URL())
	_, ok := s["kvshare_rows_total"]
	assert.False(t, ok, "both lenders unregistered before they closed")
}
