package nodemetrics_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/node"
	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/patience"
	"github.com/kvshare/kvshare/telemetry"
	"github.com/kvshare/kvshare/telemetry/nodemetrics"
)

// servedNode is a node over the embedded bounded store, serving at a
// socket of its own until the test ends.
type servedNode struct {
	*node.Node
	store  *memdrv.Store
	socket string
}

func serveNode(t *testing.T, ctx context.Context, allow []uint32) servedNode {
	t.Helper()
	return serveNodeWith(t, ctx, func(c *node.Config) { c.AllowUIDs = allow })
}

// serveNodeWith is serveNode with a config shape changes.
func serveNodeWith(t *testing.T, ctx context.Context, shape func(*node.Config)) servedNode {
	t.Helper()
	store, err := memdrv.NewBoundedStore(memdrv.StoreOptions{Capacity: 1 << 20})
	require.NoError(t, err)
	drv := memdrv.New(store, memdrv.Options{Logger: slog.New(slog.DiscardHandler)})
	dir, err := os.MkdirTemp("", "kvnode")
	require.NoError(t, err)
	socket := filepath.Join(dir, "node.sock")
	cfg := node.Config{Driver: drv, Socket: socket, Logger: slog.New(slog.DiscardHandler)}
	shape(&cfg)
	n, err := node.New(cfg)
	require.NoError(t, err)
	l, err := node.Listen(socket, 0o600)
	require.NoError(t, err)
	served := make(chan struct{})
	go func() { defer close(served); _ = n.Serve(ctx, l) }()
	t.Cleanup(func() {
		sctx, cancel := patience.For(t).Context(context.Background())
		defer cancel()
		assert.Empty(t, n.Shutdown(sctx), "nothing held at the end")
		<-served
		assert.True(t, drv.Drain(sctx))
		assert.NoError(t, drv.Close())
		assert.NoError(t, store.Close())
		os.RemoveAll(dir)
	})
	return servedNode{Node: n, store: store, socket: socket}
}

func dial(t *testing.T, ctx context.Context, socket, engine string) *nodeclient.Client {
	t.Helper()
	c, err := nodeclient.Dial(ctx, socket, nodeclient.Options{Engine: engine, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return c
}

// A node with three sessions of two declared names, memory lent, a
// publish held inside the store: each figure collected equals the
// node's Stats(), the per-engine figures summed by declared name; once
// an engine detaches its series is gone, and a refused peer is counted.
func TestFiguresEqualTheNodesStats(t *testing.T) {
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	mp, reader := newReader(t)
	n := serveNode(t, ctx, nil)
	reg, err := nodemetrics.Observe(mp, n, attribute.String("node", "test"))
	require.NoError(t, err)

	prefillA := dial(t, ctx, n.socket, "prefill")
	prefillB := dial(t, ctx, n.socket, "prefill")
	decode := dial(t, ctx, n.socket, "decode")
	lendA, err := prefillA.Lend(ctx, nodeclient.Geometry{SlotBytes: 4096, SlotCount: 4})
	require.NoError(t, err)
	lendB, err := prefillB.Lend(ctx, nodeclient.Geometry{SlotBytes: 4096, SlotCount: 8, Regions: 2})
	require.NoError(t, err)
	lendD, err := decode.Lend(ctx, nodeclient.Geometry{SlotBytes: 8192, SlotCount: 2})
	require.NoError(t, err)

	gate := n.store.HoldTransfers(memdrv.PutDir)
	a, err := lendA.Publish(ctx, contract.View{Groups: []contract.Group{{Slots: []int32{0}, Names: [][]byte{[]byte("held")}}}}, nodeclient.TransferOptions{})
	require.NoError(t, err)
	require.NoError(t, gate.Held(ctx))

	st := n.Stats()
	r := collect(t, reader)
	require.Equal(t, st.Engines, n.Stats().Engines, "nothing moved since the snapshot")
	require.EqualValues(t, 3, st.Engines)
	require.EqualValues(t, 1, st.AttemptsOpen, "the publish is held inside the store")

	nodeAttr := attribute.String("node", "test")
	type shape struct {
		value     int64
		unit      string
		monotonic bool
	}
	want := map[string]shape{
		"kvshare.node.engines":        {st.Engines, "{engine}", false},
		"kvshare.node.attached":       {st.Attached, "{session}", true},
		"kvshare.node.attach.refused": {st.PeersRefused, "{connection}", true},
		"kvshare.node.lends":          {st.Lends, "{lend}", false},
		"kvshare.node.lent.bytes":     {st.LentBytes, "By", false},
		"kvshare.node.attempt.open":   {st.AttemptsOpen, "{attempt}", false},
		"kvshare.node.held.lends":     {st.HeldLends, "{lend}", false},
		"kvshare.node.held.bytes":     {st.HeldBytes, "By", false},
		"kvshare.node.attempts":       {st.Attempts, "{attempt}", true},
		"kvshare.node.refusals":       {st.Refused(), "{request}", true},
		"kvshare.node.reclaims":       {st.Reclaims, "{reclaim}", true},
		"kvshare.node.reclaim.bytes":  {st.BytesReclaimed, "By", true},
	}
	perEngine := map[string]string{
		"kvshare.node.engine.sessions":     "{session}",
		"kvshare.node.engine.lends":        "{lend}",
		"kvshare.node.engine.lent.bytes":   "By",
		"kvshare.node.engine.attempt.open": "{attempt}",
		"kvshare.node.engine.held.bytes":   "By",
	}
	perTenant := map[string]string{
		"kvshare.node.tenant.sessions":       "{session}",
		"kvshare.node.tenant.lent.bytes":     "By",
		"kvshare.node.tenant.inflight.bytes": "By",
		"kvshare.node.tenant.attempt.open":   "{attempt}",
		"kvshare.node.tenant.refusals":       "{request}",
		"kvshare.node.tenant.denied":         "{session}",
	}
	assert.Len(t, r, len(want)+len(perEngine)+len(perTenant), "the node's instruments and no others")
	require.Len(t, st.PerTenant, 1, "unscoped sessions: the tenant \"\" alone")
	none := []attribute.KeyValue{nodeAttr, attribute.String("tenant", "")}
	assert.EqualValues(t, 3, r.value(t, "kvshare.node.tenant.sessions", none...))
	assert.Equal(t, st.PerTenant[0].LentBytes, r.value(t, "kvshare.node.tenant.lent.bytes", none...))
	assert.Equal(t, st.LentBytes, st.PerTenant[0].LentBytes, "every lend is the tenant's")
	assert.EqualValues(t, 4096, r.value(t, "kvshare.node.tenant.inflight.bytes", none...), "the held publish's one slot")
	assert.EqualValues(t, 1, r.value(t, "kvshare.node.tenant.attempt.open", none...))
	for metric, w := range want {
		assert.Equal(t, w.value, r.value(t, metric, nodeAttr), metric)
		points, monotonic := r.sum(t, metric)
		assert.Len(t, points, 1, metric)
		assert.Equal(t, w.monotonic, monotonic, metric)
		assert.Equal(t, w.unit, r[metric].Unit, metric)
		assert.NotEmpty(t, r[metric].Description, metric)
	}
	for metric, unit := range perEngine {
		points, monotonic := r.sum(t, metric)
		assert.Len(t, points, 2, "%s: one series per declared name, not per connection", metric)
		assert.False(t, monotonic, metric)
		assert.Equal(t, unit, r[metric].Unit, metric)
	}
	// Summed by the name each engine declared, from the node's own
	// per-engine figures.
	sums := map[string]node.Counts{}
	sessions := map[string]int64{}
	for _, e := range st.PerEngine {
		c := sums[e.Engine]
		c.Lends += e.Lends
		c.LentBytes += e.LentBytes
		c.AttemptsOpen += e.AttemptsOpen
		c.HeldBytes += e.HeldBytes
		sums[e.Engine] = c
		sessions[e.Engine]++
	}
	for _, name := range []string{"prefill", "decode"} {
		at := []attribute.KeyValue{nodeAttr, attribute.String("engine", name)}
		assert.Equal(t, sessions[name], r.value(t, "kvshare.node.engine.sessions", at...), name)
		assert.Equal(t, sums[name].Lends, r.value(t, "kvshare.node.engine.lends", at...), name)
		assert.Equal(t, sums[name].LentBytes, r.value(t, "kvshare.node.engine.lent.bytes", at...), name)
		assert.Equal(t, sums[name].AttemptsOpen, r.value(t, "kvshare.node.engine.attempt.open", at...), name)
		assert.Equal(t, sums[name].HeldBytes, r.value(t, "kvshare.node.engine.held.bytes", at...), name)
	}
	prefill := []attribute.KeyValue{nodeAttr, attribute.String("engine", "prefill")}
	assert.EqualValues(t, 2, r.value(t, "kvshare.node.engine.sessions", prefill...))
	assert.Equal(t, lendA.Bytes()+lendB.Bytes(), r.value(t, "kvshare.node.engine.lent.bytes", prefill...), "both prefill sessions' lends")
	assert.EqualValues(t, 1, r.value(t, "kvshare.node.engine.attempt.open", prefill...))
	assert.Equal(t, lendD.Bytes(), r.value(t, "kvshare.node.engine.lent.bytes", nodeAttr, attribute.String("engine", "decode")))

	gate.Release()
	_, err = a.Wait(ctx)
	require.NoError(t, err)
	<-a.Done()

	// A peer the node refuses: not on the allow-list.
	refusing := serveNode(t, ctx, []uint32{uint32(os.Getuid()) + 1})
	mp2, reader2 := newReader(t)
	reg2, err := nodemetrics.Observe(mp2, refusing)
	require.NoError(t, err)
	_, err = nodeclient.Dial(ctx, refusing.socket, nodeclient.Options{Engine: "stranger"})
	require.Error(t, err)
	assert.EqualValues(t, 1, collect(t, reader2).value(t, "kvshare.node.attach.refused"))
	require.NoError(t, reg2.Unregister())

	r = collect(t, reader)
	assert.EqualValues(t, 1, r.value(t, "kvshare.node.attempts", nodeAttr))
	assert.EqualValues(t, 0, r.value(t, "kvshare.node.engine.attempt.open", prefill...))
	require.NoError(t, reg.Unregister())
	assert.Empty(t, collect(t, reader), "unregistered: the node is not read again")
	for _, l := range []*nodeclient.Lend{lendA, lendB, lendD} {
		require.NoError(t, l.Return(ctx))
	}
	for _, c := range []*nodeclient.Client{prefillA, prefillB, decode} {
		require.NoError(t, c.Close(ctx))
	}
}

// Each tenant's series carry its usage and refusals as the node's
// Stats().PerTenant says: sessions, lent bytes, a lend refused over the
// tenant's limit (by limit), a hello refused because the peer may not
// declare the tenant. The client sees the refusals as
// nodewire.ErrTenantLimit and nodewire.ErrTenantNotAllowed.
func TestTenantFiguresEqualTheNodesStats(t *testing.T) {
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	mp, reader := newReader(t)
	me := uint32(os.Getuid())
	n := serveNodeWith(t, ctx, func(c *node.Config) {
		c.Tenants = []node.Tenant{{Name: "acme", UIDs: []uint32{me}, MaxLentBytes: 4096}, {Name: "initech", UIDs: []uint32{me + 1}}}
	})
	reg, err := nodemetrics.Observe(mp, n)
	require.NoError(t, err)
	defer reg.Unregister()

	scope := keys.Scope{Model: "m", Revision: "r", KVDType: "fp16", TokensPerBlock: 16, KVHeads: 8, HeadDim: 128,
		Layers: 32, TPSize: 1, PPSize: 1, HashAlgorithm: "xxh3-128", Tenant: "acme"}
	c, err := nodeclient.Dial(ctx, n.socket, nodeclient.Options{Engine: "prefill", Scope: scope, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	l, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: 4096, SlotCount: 1})
	require.NoError(t, err)
	_, err = c.Lend(ctx, nodeclient.Geometry{SlotBytes: 4096, SlotCount: 1})
	require.ErrorIs(t, err, nodewire.ErrTenantLimit)
	scope.Tenant = "initech"
	_, err = nodeclient.Dial(ctx, n.socket, nodeclient.Options{Engine: "intruder", Scope: scope, Logger: slog.New(slog.DiscardHandler)})
	require.ErrorIs(t, err, nodewire.ErrTenantNotAllowed)

	st := n.Stats()
	r := collect(t, reader)
	acme, initech := attribute.String("tenant", "acme"), attribute.String("tenant", "initech")
	require.Len(t, st.PerTenant, 2)
	assert.EqualValues(t, 1, r.value(t, "kvshare.node.tenant.sessions", acme))
	assert.EqualValues(t, 0, r.value(t, "kvshare.node.tenant.sessions", initech))
	assert.Equal(t, l.Bytes(), r.value(t, "kvshare.node.tenant.lent.bytes", acme))
	assert.EqualValues(t, 1, r.value(t, "kvshare.node.tenant.refusals", acme, attribute.String("limit", node.LimitLentBytes)))
	assert.EqualValues(t, 0, r.value(t, "kvshare.node.tenant.refusals", acme, attribute.String("limit", node.LimitAttemptsInFlight)))
	assert.EqualValues(t, 1, r.value(t, "kvshare.node.tenant.denied", initech))
	assert.EqualValues(t, 0, r.value(t, "kvshare.node.tenant.denied", acme))
	require.NoError(t, l.Return(ctx))
	require.NoError(t, c.Close(ctx))
}

// stagedNode is a node whose Stats the test sets.
type stagedNode struct{ s node.Stats }

func (n *stagedNode) Stats() node.Stats { return n.s }

// An engine's series ends when it detaches: the next collection has no
// point for its name, and the other engine's goes on.
func TestEngineSeriesEndsWhenItDetaches(t *testing.T) {
	mp, reader := newReader(t)
	n := &stagedNode{s: node.Stats{Engines: 2, PerEngine: []node.EngineStats{
		{Session: 1, Engine: "prefill", Counts: node.Counts{Lends: 1, LentBytes: 4096}},
		{Session: 2, Engine: "decode", Counts: node.Counts{Lends: 1, LentBytes: 8192, HeldBytes: 8192}},
	}}}
	reg, err := nodemetrics.Observe(mp, n)
	require.NoError(t, err)
	defer reg.Unregister()
	r := collect(t, reader)
	assert.EqualValues(t, 8192, r.value(t, "kvshare.node.engine.held.bytes", attribute.String("engine", "decode")))
	n.s = node.Stats{Engines: 1, PerEngine: n.s.PerEngine[:1]}
	r = collect(t, reader)
	for _, metric := range []string{"kvshare.node.engine.sessions", "kvshare.node.engine.lent.bytes", "kvshare.node.engine.held.bytes"} {
		points, _ := r.sum(t, metric)
		assert.Len(t, points, 1, "%s: the decode engine detached, its series is gone", metric)
	}
	assert.EqualValues(t, 4096, r.value(t, "kvshare.node.engine.lent.bytes", attribute.String("engine", "prefill")))
}
func TestObserveRefusesBadArguments(t *testing.T) {
	mp := noop.NewMeterProvider()
	_, err := nodemetrics.Observe(mp, nil)
	assert.ErrorIs(t, err, telemetry.ErrArgument)
	var n *node.Node
	_, err = nodemetrics.Observe(nil, n)
	assert.ErrorIs(t, err, telemetry.ErrArgument)
	for _, own := range []string{"engine", "tenant", "limit"} {
		_, err = nodemetrics.Observe(mp, fakeNode{}, attribute.String(own, "x"))
		assert.ErrorIs(t, err, telemetry.ErrArgument, "%s is the instruments' own", own)
	}
	_, err = nodemetrics.Observe(mp, fakeNode{}, attribute.String("status", "up"))
	assert.ErrorIs(t, err, telemetry.ErrArgument)
}

type fakeNode struct{}

func (fakeNode) Stats() node.Stats { return node.Stats{} }
