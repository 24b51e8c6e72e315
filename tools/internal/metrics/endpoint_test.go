package metrics_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
	"github.com/kvshare/kvshare/tools/internal/metrics"
)

type hold struct{}

func (hold) Release() {}

// backendOver lends a region of 8 slots to a backend over d.
func backendOver(t *testing.T, d contract.Driver) *binding.Backend {
	t.Helper()
	mem, err := memdrv.Alloc(4096, 8, contract.Host)
	require.NoError(t, err)
	regions, err := binding.Bind(d, []contract.SlotRegion{mem.Region}, hold{})
	require.NoError(t, err)
	b, err := binding.New(regions, binding.Config{KeyPrefix: "metrics", Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() {
		if len(b.Shutdown(context.Background())) == 0 {
			_ = d.Close()
			_ = mem.Free()
		}
	})
	return b
}

func settle(t *testing.T, submit func() (contract.Attempt, error)) contract.Outcome {
	t.Helper()
	a, err := submit()
	require.NoError(t, err)
	<-a.Done()
	o, _ := a.Outcome()
	return o
}

func oneGroup(names ...string) contract.View {
	g := contract.Group{}
	for i, n := range names {
		g.Slots = append(g.Slots, int32(i))
		g.Names = append(g.Names, []byte(n))
	}
	return contract.View{Groups: []contract.Group{g}}
}

// A scrape of the endpoint on loopback serves, per lender, the figures
// of its backend's Stats() and of its Mooncake driver's, under their
// Prometheus names.
func TestScrapeMatchesStats(t *testing.T) {
	e, err := metrics.Serve("127.0.0.1:0")
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Close(context.Background())) }()
	require.Regexp(t, `^http://127\.0\.0\.1:\d+/metrics$`, e.URL())

	memDriver := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	memBackend := backendOver(t, memDriver)
	mcDriver, err := mooncakedrv.New(fakesdk.New(fakesdk.Options{}).Client(), mooncakedrv.Config{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	mcBackend := backendOver(t, mcDriver)
	unMem, err := e.Observe("memory", memBackend, memDriver)
	require.NoError(t, err)
	unMC, err := e.Observe("mooncake", mcBackend, mcDriver)
	require.NoError(t, err)

	for _, b := range []*binding.Backend{memBackend, mcBackend} {
		settle(t, func() (contract.Attempt, error) { return b.Publish(oneGroup("a", "b", "c"), nil) })
		o := settle(t, func() (contract.Attempt, error) { return b.Fetch(oneGroup("a", "absent"), nil) })
		require.Equal(t, []bool{true, false}, o.Delivered)
	}

	s := scrapeURL(t, e.URL())
	for lender, b := range map[string]*binding.Backend{"memory": memBackend, "mooncake": mcBackend} {
		st := b.Stats()
		l := []string{"lender", lender}
		assert.EqualValues(t, st.Attempts, s.value(t, "kvshare_attempt_started_total", l...), lender)
		assert.EqualValues(t, st.AttemptsOpen, s.value(t, "kvshare_attempt_open", l...), lender)
		for status := contract.Ready; status < contract.RowStatusCount; status++ {
			assert.EqualValues(t, st.PublishRows[status], s.value(t, "kvshare_rows_total", append(l, "direction", "put", "status", status.String())...), "%s %v", lender, status)
			assert.EqualValues(t, st.FetchRows[status], s.value(t, "kvshare_rows_total", append(l, "direction", "get", "status", status.String())...), "%s %v", lender, status)
		}
		assert.EqualValues(t, st.CallsInFlight, s.value(t, "kvshare_call_in_flight", l...), lender)
		assert.EqualValues(t, st.CallsUnprovable, s.value(t, "kvshare_call_unprovable", l...), lender)
		assert.EqualValues(t, st.OldestCall.Seconds(), s.value(t, "kvshare_call_oldest_age_seconds", l...), lender)
		assert.EqualValues(t, st.RowsLent, s.value(t, "kvshare_lent_rows", l...), lender)
		assert.EqualValues(t, st.BytesLent, s.value(t, "kvshare_lent_bytes", l...), lender)
		assert.EqualValues(t, 0, s.value(t, "kvshare_violation", l...), lender)
		assert.EqualValues(t, st.Reclaims, s.value(t, "kvshare_reclaim_count_total", l...), lender)
		assert.EqualValues(t, st.BytesReclaimed, s.value(t, "kvshare_reclaim_bytes_total", l...), lender)
	}
	ms := mcDriver.Stats()
	l := []string{"lender", "mooncake"}
	for dir, rows := range map[contract.Direction][contract.RowStatusCount]int64{contract.PutDir: ms.PutRows, contract.GetDir: ms.GetRows} {
		for status := contract.Ready; status < contract.RowStatusCount; status++ {
			assert.EqualValues(t, rows[status], s.value(t, "kvshare_mooncake_rows_total", append(l, "direction", dir.String(), "status", status.String())...))
		}
	}
	assert.EqualValues(t, ms.KeysLeftOpen, s.value(t, "kvshare_mooncake_keys_left_open", l...))
	assert.EqualValues(t, ms.RowsDeclinedLeftOpen, s.value(t, "kvshare_mooncake_rows_declined_left_open_total", l...))
	assert.EqualValues(t, ms.RowsUnprovable, s.value(t, "kvshare_mooncake_rows_unprovable", l...))
	assert.EqualValues(t, ms.Calls, s.value(t, "kvshare_mooncake_sdk_calls_total", l...))
	assert.EqualValues(t, ms.Panics, s.value(t, "kvshare_mooncake_sdk_panics_total", l...))
	assert.EqualValues(t, ms.CallsShared, s.value(t, "kvshare_mooncake_sdk_calls_shared_total", l...))
	assert.EqualValues(t, ms.PartsUnprovableShared, s.value(t, "kvshare_mooncake_parts_unprovable_shared_total", l...))
	assert.EqualValues(t, ms.Recycles, s.value(t, "kvshare_mooncake_recycles_total", l...))
	assert.EqualValues(t, ms.RowsRecycled, s.value(t, "kvshare_mooncake_rows_recycled_total", l...))
	assert.EqualValues(t, 3, s.value(t, "kvshare_rows_total", "lender", "memory", "direction", "put", "status", "ready"), "3 published")
	assert.EqualValues(t, 1, s.value(t, "kvshare_rows_total", "lender", "memory", "direction", "get", "status", "ready"), "1 fetched")
	_, memHasMooncake := s["kvshare_mooncake_rows_total"]
	require.True(t, memHasMooncake)
	for _, m := range s["kvshare_mooncake_rows_total"].GetMetric() {
		assert.False(t, hasLabels(m, []string{"lender", "memory"}), "a memdrv lender has no Mooncake figures")
	}

	require.NoError(t, unMem())
	require.NoError(t, unMC())
	s = scrapeURL(t, e.URL())
	_, ok := s["kvshare_rows_total"]
	assert.False(t, ok, "nothing is served once unregistered")
}

func TestServeRefusesABadAddress(t *testing.T) {
	_, err := metrics.Serve("127.0.0.1:not-a-port")
	assert.Error(t, err)
}

// The embedded store's figures are served once, with store=<name>,
// under their Prometheus names, and equal its Stats().
func TestScrapeServesTheStoresFigures(t *testing.T) {
	e, err := metrics.Serve("127.0.0.1:0")
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Close(context.Background())) }()
	store, err := memdrv.NewBoundedStore(memdrv.StoreOptions{Capacity: 2 * 4096, ChunkBytes: 4096})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	b := backendOver(t, memdrv.New(store, memdrv.Options{}))
	unregister, err := e.ObserveStore("embedded", store)
	require.NoError(t, err)

	o := settle(t, func() (contract.Attempt, error) { return b.Publish(oneGroup("a", "b", "c"), nil) })
	require.Equal(t, []bool{true, true, true}, o.Delivered, "the third put evicts the first")
	st := store.Stats()
	require.EqualValues(t, 1, st.Evictions)
	s := scrapeURL(t, e.URL())
	l := []string{"store", "embedded"}
	for name, want := range map[string]int64{
		"kvshare_memory_capacity_bytes":      st.Capacity,
		"kvshare_memory_in_use_bytes":        st.InUse,
		"kvshare_memory_objects":             st.Objects,
		"kvshare_memory_object_bytes":        st.Bytes,
		"kvshare_memory_evictions_total":     st.Evictions,
		"kvshare_memory_evicted_bytes_total": st.EvictedBytes,
		"kvshare_memory_declines_total":      st.Declines,
	} {
		assert.EqualValues(t, want, s.value(t, name, l...), name)
	}
	require.NoError(t, unregister())
	_, ok := scrapeURL(t, e.URL())["kvshare_memory_objects"]
	assert.False(t, ok, "nothing is served once unregistered")
}
