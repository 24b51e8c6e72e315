package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/storeconfig"
)

// envNodeTenants holds the node process's tenant specs
// (storeconfig.ParseNodeTenant), one a line.
const envNodeTenants = "KVSHARE_TEST_NODE_TENANTS"

// nodeTenants reads the node process's tenants from its environment.
func nodeTenants() ([]Tenant, error) {
	var ts []Tenant
	for l := range strings.Lines(os.Getenv(envNodeTenants)) {
		t, err := storeconfig.ParseNodeTenant(strings.TrimSuffix(l, "\n"))
		if err != nil {
			return nil, errors.Join(errors.New(envNodeTenants), err)
		}
		ts = append(ts, Tenant{Name: t.Name, UIDs: t.UIDs, GIDs: t.GIDs,
			MaxLentBytes: t.MaxLentBytes, MaxBytesInFlight: t.MaxBytesInFlight, MaxAttemptsInFlight: t.MaxAttemptsInFlight})
	}
	return ts, nil
}

// rawScope is a scope's canonical text as the hello carries it.
type rawScope string

func (s rawScope) MarshalText() ([]byte, error) { return []byte(s), nil }

// probeRows looks up count rows tagged tag, fills slots 0… of region
// with 0xEE and fetches the rows into them, whatever the store holds;
// it says what it saw: rows present, fetched Ready, Miss, slots holding
// the row's bytes, slots still all 0xEE.
func probeRows(ctx context.Context, c *nodeclient.Client, l *nodeclient.Lend, tag string, region, count int) (string, error) {
	ns := rowNames(tag, count)
	found, err := c.Lookup(ctx, contract.View{Groups: []contract.Group{{Names: ns}}}, nodeclient.LookupOptions{Every: true})
	if err != nil {
		return "", err
	}
	fence := bytes.Repeat([]byte{0xEE}, int(engineGeometry.SlotBytes))
	g := contract.Group{Region: region, Names: ns}
	for i := range ns {
		g.Slots = append(g.Slots, int32(i))
		copy(l.Slot(region, i), fence)
	}
	a, err := l.Fetch(ctx, contract.View{Groups: []contract.Group{g}}, nodeclient.TransferOptions{})
	if err != nil {
		return "", err
	}
	o, err := a.Wait(ctx)
	if err != nil {
		return "", err
	}
	select {
	case <-a.Done():
	case <-ctx.Done():
		return "", fmt.Errorf("%v did not quiesce: %w", a, ctx.Err())
	}
	var present, ready, miss, match, untouched int
	for _, p := range found.Rows {
		if p == contract.Present {
			present++
		}
	}
	for i, s := range o.Rows {
		switch s {
		case contract.Ready:
			ready++
		case contract.Miss:
			miss++
		}
		switch got := l.Slot(region, i); {
		case bytes.Equal(got, rowBytes(string(ns[i]), engineGeometry.SlotBytes)):
			match++
		case bytes.Equal(got, fence):
			untouched++
		}
	}
	return fmt.Sprintf("probe present=%d ready=%d miss=%d match=%d untouched=%d", present, ready, miss, match, untouched), nil
}

// twoScopedEngines is the scope test over a node process serving store
// (see TestHelperNode), with env added to its environment: one engine
// process publishes rows under a scope and leaves; a second engine
// process finds and fetches every row, every byte the first's, under
// the same scope — and under a scope that differs in dtype, revision,
// tenant or layout, or under none, finds every row Absent and fetches
// nothing (every row Miss, its slot untouched). A peer declaring a
// tenant the node's configuration gives only another uid is refused at
// its dial.
func twoScopedEngines(t *testing.T, store string, env ...string) {
	me := os.Getuid()
	tenants := fmt.Sprintf("uids=%d tenant=acme\nuids=%d tenant=beta\nuids=%d tenant=initech", me, me, me+1)
	p := startNode(t, store, append(env, envNodeTenants+"="+tenants)...)
	const rows = 4
	tag := fmt.Sprintf("%s-%d", t.Name(), os.Getpid())
	base := testScope()
	scoped := func(s keys.Scope) string { return envEngineScope + "=" + scopeText(t, s) }

	pub := launchEngine(t, p.socket, "publisher", scoped(base))
	pub.expect("ok dial")
	pub.do("lend")
	pub.do(fmt.Sprintf("publish %s 0 %d", tag, rows))
	pub.do("return")
	pub.do("close")

	variant := func(f func(*keys.Scope)) string {
		s := base
		f(&s)
		return scoped(s)
	}
	absent := fmt.Sprintf("probe present=0 ready=0 miss=%d match=0 untouched=%d", rows, rows)
	for _, tc := range []struct {
		name, scope, want string
	}{
		{"the same scope", scoped(base), fmt.Sprintf("probe present=%d ready=%d miss=0 match=%d untouched=0", rows, rows, rows)},
		{"another dtype", variant(func(s *keys.Scope) { s.KVDType = "int4" }), absent},
		{"another revision", variant(func(s *keys.Scope) { s.Revision = "ffff000" }), absent},
		{"another tenant", variant(func(s *keys.Scope) { s.Tenant = "beta" }), absent},
		{"another layout", variant(func(s *keys.Scope) { s.KVHeads, s.HeadDim = 4, 256 }), absent},
		{"no scope", envEngineScope + "=", absent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := launchEngine(t, p.socket, "reader", tc.scope)
			e.expect("ok dial")
			e.do("lend")
			assert.Equal(t, tc.want, e.do(fmt.Sprintf("probe %s 1 %d", tag, rows)))
			e.do("return")
			e.do("close")
		})
	}
	t.Run("a tenant the peer may not declare", func(t *testing.T) {
		e := launchEngine(t, p.socket, "intruder", variant(func(s *keys.Scope) { s.Tenant = "initech" }))
		said := e.expect("fail")
		assert.Contains(t, said, "refused ("+nodewire.CodeTenantNotAllowed.String()+"): hello.scope.tenant")
		assert.Contains(t, said, `tenant "initech"`)
	})
	p.stop()
}

// TestTwoEngineProcessesShareOnlyTheirScope runs the scope test over
// the embedded store, in three processes: the node, the publishing
// engine, the reading one.
func TestTwoEngineProcessesShareOnlyTheirScope(t *testing.T) {
	twoScopedEngines(t, "memdrv")
}
