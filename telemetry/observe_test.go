package telemetry_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/telemetry"
)

// cannedBackend answers Stats with fixed figures and counts the calls.
type cannedBackend struct {
	stats contract.Stats
	calls atomic.Int64
}

func (b *cannedBackend) Stats() contract.Stats {
	b.calls.Add(1)
	return b.stats
}

// every figure distinct, so that a figure observed into the wrong
// instrument shows
var canned = contract.Stats{
	Attempts:        101,
	AttemptsOpen:    7,
	Rows:            [contract.RowStatusCount]int64{0, 11, 12, 13, 14, 15, 16},
	PublishRows:     [contract.RowStatusCount]int64{0, 1, 2, 3, 4, 5, 6},
	FetchRows:       [contract.RowStatusCount]int64{0, 10, 10, 10, 10, 10, 10},
	CallsInFlight:   3,
	CallsUnprovable: 2,
	RowsLent:        40,
	BytesLent:       40 << 12,
	OldestCall:      1500 * time.Millisecond,
	Violation:       "the driver panicked in Put",
}

func status(s contract.RowStatus) attribute.KeyValue { return attribute.String("status", s.String()) }

// put and get are the direction attributes of a publish's and a fetch's
// rows.
var (
	put = attribute.String("direction", "put")
	get = attribute.String("direction", "get")
)

// Each instrument reports its field of one Stats() snapshot, read once
// per collection, with the caller's attributes on every point; the
// names, units and kinds are the README's.
func TestObserveReportsEveryField(t *testing.T) {
	mp, reader := newReader(t)
	b := &cannedBackend{stats: canned}
	lender := attribute.String("lender", "a")
	reg, err := telemetry.Observe(mp, b, lender)
	require.NoError(t, err)
	defer func() { require.NoError(t, reg.Unregister()) }()
	assert.Zero(t, b.calls.Load(), "Observe reads nothing before a collection")

	r := collect(t, reader)
	assert.EqualValues(t, 1, b.calls.Load(), "one Stats() per collection")

	assert.EqualValues(t, 101, r.value(t, "kvshare.attempt.started", lender))
	assert.EqualValues(t, 7, r.value(t, "kvshare.attempt.open", lender))
	for s := contract.Ready; s < contract.RowStatusCount; s++ {
		assert.EqualValues(t, canned.PublishRows[s], r.value(t, "kvshare.rows", lender, put, status(s)), "publish rows %v", s)
		assert.EqualValues(t, canned.FetchRows[s], r.value(t, "kvshare.rows", lender, get, status(s)), "fetch rows %v", s)
	}
	assert.Len(t, r.points(t, "kvshare.rows"), 2*int(contract.RowStatusCount-1), "every direction and final status, never pending")
	assert.EqualValues(t, 3, r.value(t, "kvshare.call.in_flight", lender))
	assert.EqualValues(t, 2, r.value(t, "kvshare.call.unprovable", lender))
	assert.InDelta(t, 1.5, r.value(t, "kvshare.call.oldest_age", lender), 1e-9)
	assert.EqualValues(t, 40, r.value(t, "kvshare.lent.rows", lender))
	assert.EqualValues(t, 40<<12, r.value(t, "kvshare.lent.bytes", lender))
	assert.EqualValues(t, 1, r.value(t, "kvshare.violation", lender))

	type shape struct {
		unit      string
		kind      string
		monotonic bool
	}
	want := map[string]shape{
		"kvshare.attempt.started": {"{attempt}", "sum", true},
		"kvshare.attempt.open":    {"{attempt}", "sum", false},
		"kvshare.rows":            {"{row}", "sum", true},
		"kvshare.call.in_flight":  {"{call}", "sum", false},
		"kvshare.call.unprovable": {"{call}", "sum", false},
		"kvshare.call.oldest_age": {"s", "gauge", false},
		"kvshare.lent.rows":       {"{row}", "sum", false},
		"kvshare.lent.bytes":      {"By", "sum", false},
		"kvshare.violation":       {"{violation}", "gauge", false},
		"kvshare.reclaim.count":   {"{reclaim}", "sum", true},
		"kvshare.reclaim.bytes":   {"By", "sum", true},
	}
	assert.Len(t, r, len(want), "the backend's instruments and no others")
	for name, w := range want {
		m := r[name]
		assert.Equal(t, w.unit, m.Unit, name)
		assert.NotEmpty(t, m.Description, name)
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			assert.Equal(t, "sum", w.kind, name)
			assert.Equal(t, w.monotonic, d.IsMonotonic, name)
			assert.Equal(t, metricdata.CumulativeTemporality, d.Temporality, name)
		case metricdata.Gauge[int64], metricdata.Gauge[float64]:
			assert.Equal(t, "gauge", w.kind, name)
		default:
			t.Errorf("%s: unexpected data %T", name, m.Data)
		}
	}

	b.stats.Violation = ""
	b.stats.OldestCall = 0
	r = collect(t, reader)
	assert.EqualValues(t, 0, r.value(t, "kvshare.violation", lender))
	assert.EqualValues(t, 0, r.value(t, "kvshare.call.oldest_age", lender))
	assert.EqualValues(t, 2, b.calls.Load())
}

// assertMatches checks every figure of r against s, a Stats() snapshot
// taken with nothing in flight (so OldestCall is 0 and stable).
func assertMatches(t *testing.T, r reading, s contract.Stats) {
	t.Helper()
	assert.EqualValues(t, s.Attempts, r.value(t, "kvshare.attempt.started"))
	assert.EqualValues(t, s.AttemptsOpen, r.value(t, "kvshare.attempt.open"))
	for st := contract.Ready; st < contract.RowStatusCount; st++ {
		assert.EqualValues(t, s.PublishRows[st], r.value(t, "kvshare.rows", put, status(st)), "publish rows %v", st)
		assert.EqualValues(t, s.FetchRows[st], r.value(t, "kvshare.rows", get, status(st)), "fetch rows %v", st)
	}
	assert.EqualValues(t, s.CallsInFlight, r.value(t, "kvshare.call.in_flight"))
	assert.EqualValues(t, s.CallsUnprovable, r.value(t, "kvshare.call.unprovable"))
	assert.EqualValues(t, s.OldestCall.Seconds(), r.value(t, "kvshare.call.oldest_age"))
	assert.EqualValues(t, s.RowsLent, r.value(t, "kvshare.lent.rows"))
	assert.EqualValues(t, s.BytesLent, r.value(t, "kvshare.lent.bytes"))
	assert.EqualValues(t, s.Reclaims, r.value(t, "kvshare.reclaim.count"))
	assert.EqualValues(t, s.BytesReclaimed, r.value(t, "kvshare.reclaim.bytes"))
	assert.EqualValues(t, 0, r.value(t, "kvshare.violation"))
}

// A real backend over memdrv, driven to every final row status: each
// figure collected equals Stats().
func TestFiguresEqualStatsOfABackend(t *testing.T) {
	mp, reader := newReader(t)
	store := memdrv.NewStore()
	l := newLender(t, store)
	reg, err := telemetry.Observe(mp, l.backend)
	require.NoError(t, err)
	defer func() { require.NoError(t, reg.Unregister()) }()

	// Ready: four rows published.
	a, err := l.backend.Publish(view(0, "r0", "r1", "r2", "r3"), nil)
	require.NoError(t, err)
	require.Equal(t, 4, quiesced(t, a).Prefix())
	// Miss, Fault, NotReady, Ready: a fetch of an absent name, one whose
	// read fails, one another writer is still writing, and a present one.
	l.driver.FailReads(key(t, "r1"))
	finish := store.BeginWrite(key(t, "being-written"))
	a, err = l.backend.Fetch(view(4, "absent", "r1", "being-written", "r2"), nil)
	require.NoError(t, err)
	o := quiesced(t, a)
	assert.Equal(t, []bool{false, false, false, true}, o.Delivered)
	finish(make([]byte, slotBytes))
	// Cancelled: a fetch whose rows no worker took before its cancel.
	resume := l.driver.Pause()
	a, err = l.backend.Fetch(view(8, "r3"), nil)
	require.NoError(t, err)
	a.Cancel()
	resume()
	quiesced(t, a)
	// Declined: a publish into a full store.
	store.SetFull()
	a, err = l.backend.Publish(view(12, "new"), nil)
	require.NoError(t, err)
	quiesced(t, a)

	s := l.backend.Stats()
	for _, st := range []contract.RowStatus{contract.Ready, contract.Miss, contract.NotReady, contract.Declined, contract.Fault, contract.Cancelled} {
		require.NotZero(t, s.Rows[st], "the scenario reaches %v", st)
	}
	r := collect(t, reader)
	assert.Equal(t, s, l.backend.Stats(), "nothing moved since the snapshot")
	assertMatches(t, r, s)
}

// While a call is in flight, the figures follow: the attempt is open,
// its call in flight, its rows and bytes lent, and the oldest call's age
// lies between two Stats() read around the collection.
func TestFiguresFollowACallInFlight(t *testing.T) {
	mp, reader := newReader(t)
	store := memdrv.NewStore()
	l := newLender(t, store)
	reg, err := telemetry.Observe(mp, l.backend)
	require.NoError(t, err)
	defer func() { require.NoError(t, reg.Unregister()) }()

	a, err := l.backend.Publish(view(0, "x", "y", "z"), nil)
	require.NoError(t, err)
	quiesced(t, a)

	gate := l.driver.Hold(memdrv.GetDir)
	a, err = l.backend.Fetch(view(3, "x", "y", "z"), nil)
	require.NoError(t, err)
	require.NoError(t, gate.Held(context.Background()))

	before := l.backend.Stats()
	r := collect(t, reader)
	after := l.backend.Stats()
	require.EqualValues(t, 1, before.CallsInFlight)
	assert.EqualValues(t, 1, r.value(t, "kvshare.attempt.open"))
	assert.EqualValues(t, before.CallsInFlight, r.value(t, "kvshare.call.in_flight"))
	assert.EqualValues(t, 3, r.value(t, "kvshare.lent.rows"))
	assert.EqualValues(t, 3*slotBytes, r.value(t, "kvshare.lent.bytes"))
	age := r.value(t, "kvshare.call.oldest_age")
	assert.GreaterOrEqual(t, age, before.OldestCall.Seconds())
	assert.LessOrEqual(t, age, after.OldestCall.Seconds())

	gate.Release()
	assert.Equal(t, 3, quiesced(t, a).Prefix())
	s := l.backend.Stats()
	assertMatches(t, collect(t, reader), s)
	assert.Zero(t, s.RowsLent)
}

// A call whose access can never be proven ended keeps its memory for
// good, and the figures say so: the call unprovable, its row and bytes
// still lent, the attempt open.
func TestFiguresKeepAnUnprovableCall(t *testing.T) {
	mp, reader := newReader(t)
	store := memdrv.NewStore()
	l := newLender(t, store)
	reg, err := telemetry.Observe(mp, l.backend)
	require.NoError(t, err)
	defer func() { require.NoError(t, reg.Unregister()) }()

	a, err := l.backend.Publish(view(0, "kept"), nil)
	require.NoError(t, err)
	quiesced(t, a)
	l.driver.UnprovableGets(key(t, "kept"))
	a, err = l.backend.Fetch(view(1, "kept"), nil)
	require.NoError(t, err)
	o := l.outcome(t, a)
	require.Error(t, o.Fault)
	require.False(t, a.Quiesced())

	s := l.backend.Stats()
	require.EqualValues(t, 1, s.CallsUnprovable)
	r := collect(t, reader)
	assertMatches(t, r, s)
	assert.EqualValues(t, 1, r.value(t, "kvshare.call.unprovable"))
	assert.EqualValues(t, 1, r.value(t, "kvshare.lent.rows"))
	assert.EqualValues(t, slotBytes, r.value(t, "kvshare.lent.bytes"))
	assert.EqualValues(t, 1, r.value(t, "kvshare.attempt.open"))
	assert.EqualValues(t, 0, r.value(t, "kvshare.call.in_flight"), "unprovable is not in flight")
}

// Collections running while views are submitted and settle see
// consistent snapshots (and race with nothing, under -race); once all
// has settled, a collection equals Stats().
func TestCollectingWhileSubmitting(t *testing.T) {
	mp, reader := newReader(t)
	l := newLender(t, memdrv.NewStore())
	reg, err := telemetry.Observe(mp, l.backend)
	require.NoError(t, err)
	defer func() { require.NoError(t, reg.Unregister()) }()

	stop := make(chan struct{})
	first := make(chan struct{})
	collected := make(chan int)
	go func() {
		n := 0
		for {
			if n == 1 {
				close(first)
			}
			select {
			case <-stop:
				collected <- n
				return
			default:
			}
			// Not the test's goroutine: assert, never require.
			var rm metricdata.ResourceMetrics
			assert.NoError(t, reader.Collect(context.Background(), &rm))
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "kvshare.lent.rows" {
						assert.Len(t, sum.DataPoints, 1)
						for _, p := range sum.DataPoints {
							assert.True(t, p.Value >= 0 && p.Value <= slots, "rows lent: %d", p.Value)
						}
					}
				}
			}
			n++
		}
	}()
	<-first // the views below are submitted while collections run
	for i := range 50 {
		names := []string{fmt.Sprintf("c%d-a", i), fmt.Sprintf("c%d-b", i)}
		a, err := l.backend.Publish(view(0, names...), nil)
		require.NoError(t, err)
		quiesced(t, a)
		a, err = l.backend.Fetch(view(2, names...), nil)
		require.NoError(t, err)
		assert.Equal(t, 2, quiesced(t, a).Prefix())
	}
	close(stop)
	t.Logf("%d collections ran beside the views", <-collected)
	assertMatches(t, collect(t, reader), l.backend.Stats())
	assert.EqualValues(t, 200, l.backend.Stats().Rows[contract.Ready])
}
