package node

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/nodewire"
)

// testScope is a valid scope of tenant acme; each test varies a field.
func testScope() keys.Scope {
	return keys.Scope{
		Model: "meta-llama/Llama-3.1-8B-Instruct", Revision: "0e9e39f", KVDType: "fp16",
		TokensPerBlock: 16, KVHeads: 8, HeadDim: 128, Layers: 32, TPSize: 1, PPSize: 1,
		HashAlgorithm: "sha256-cbor", Tenant: "acme",
	}
}

// scopeText is a scope's canonical text, as a hello carries it.
func scopeText(t testing.TB, s keys.Scope) string {
	t.Helper()
	b, err := s.MarshalText()
	require.NoError(t, err)
	return string(b)
}

// ourTenants lets this process declare acme and beta.
func ourTenants(c *Config) {
	me := []uint32{uint32(os.Getuid())}
	c.Tenants = []Tenant{{Name: "acme", UIDs: me}, {Name: "beta", GIDs: []uint32{uint32(os.Getgid())}}}
}

// attachScoped dials and says hello under scope (its canonical text,
// "" for none); it returns the welcome.
func (f *fixture) attachScoped(name, scope string) *testEngine {
	f.t.Helper()
	e := f.dial()
	expect[*nodewire.Welcome](e, e.send(&nodewire.Hello{Version: nodewire.Version, Engine: name, Scope: scope}))
	return e
}

// scopedKey is the store key of name under scope and the node's prefix.
func (f *fixture) scopedKey(scope keys.Scope, name []byte) string {
	f.t.Helper()
	stem, err := keys.NewScopedStem(f.node.cfg.KeyPrefix, scope)
	require.NoError(f.t, err)
	k, err := stem.Key(name)
	require.NoError(f.t, err)
	return k
}

// fill writes b into every byte of the memfd.
func (m *memfd) fill(b byte) {
	for i := range m.mem {
		m.mem[i] = b
	}
}

// Engines under the same scope share blocks; a second engine whose
// scope differs in any one field — dtype, revision, tenant, layout, a
// shard, no scope at all — finds every row Absent, and its fetch reads
// nothing: every row Miss, its slots as they were.
func TestScopedEnginesShareBlocksOnlyUnderTheSameScope(t *testing.T) {
	f := newFixture(t, ourTenants)
	const slotBytes, rows = 512, 4
	base := testScope()
	pub := f.attachScoped("publisher", scopeText(t, base))
	lendA, memA := pub.lend(slotBytes, rows, 1)
	for i := range memA.mem {
		memA.mem[i] = byte(i*7 + 1)
	}
	ns := names("scoped", rows)
	out := pub.settle(pub.transfer(contract.PutDir, lendA, 0, seq(rows), ns))
	require.Equal(t, repeat(contract.Ready, rows), out.Rows)

	for _, tc := range []struct {
		name  string
		scope func(*keys.Scope)
		same  bool
	}{
		{"the same scope", func(*keys.Scope) {}, true},
		{"another kv dtype", func(s *keys.Scope) { s.KVDType = "fp8_e4m3" }, false},
		{"another revision", func(s *keys.Scope) { s.Revision = "5f1c2aa" }, false},
		{"another tenant", func(s *keys.Scope) { s.Tenant = "beta" }, false},
		{"another block size", func(s *keys.Scope) { s.TokensPerBlock = 32 }, false},
		{"another tensor-parallel shard", func(s *keys.Scope) { s.TPRank, s.TPSize = 1, 2 }, false},
		{"no scope", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := ""
			if tc.scope != nil {
				s := base
				tc.scope(&s)
				text = scopeText(t, s)
			}
			e := f.attachScoped("reader", text)
			pres := expect[*nodewire.Presence](e, e.send(&nodewire.Lookup{Every: true, Groups: [][][]byte{ns}}))
			lendB, memB := e.lend(slotBytes, rows, 1)
			memB.fill(0xEE)
			got := e.settle(e.transfer(contract.GetDir, lendB, 0, seq(rows), ns))
			if tc.same {
				assert.Equal(t, repeat(contract.Present, rows), pres.Rows)
				assert.Equal(t, repeat(contract.Ready, rows), got.Rows)
				assert.Equal(t, memA.mem[:rows*slotBytes], memB.mem[:rows*slotBytes], "every byte the first engine published")
			} else {
				assert.Equal(t, repeat(contract.Absent, rows), pres.Rows)
				assert.Equal(t, repeat(contract.Miss, rows), got.Rows)
				assert.Equal(t, repeat(byte(0xEE), len(memB.mem)), memB.mem, "a fetch under another scope wrote nothing")
			}
			f.returnHonest(e, "reader", lendB)
			e.send(&nodewire.ClientGoodbye{Reason: "done"})
			e.expectEnd()
		})
	}
	f.returnHonest(pub, "publisher", lendA)
}

// A key the node writes under a scope is the key keys makes of the
// name under that scope and the node's prefix: a router that knows the
// scope finds it.
func TestTheNodeMakesTheKeysOfTheScope(t *testing.T) {
	f := newFixture(t, ourTenants)
	s := testScope()
	e := f.attachScoped("publisher", scopeText(t, s))
	lend, _ := e.lend(512, 1, 1)
	name := []byte("row-0")
	require.Equal(t, []contract.RowStatus{contract.Ready}, e.settle(e.transfer(contract.PutDir, lend, 0, []uint32{0}, [][]byte{name})).Rows)
	want := f.scopedKey(s, name)
	_, held := f.store.Object(want)
	assert.True(t, held, "the store holds %s", want)
	_, held = f.store.Object(f.key(name))
	assert.False(t, held, "nor the unscoped key")
	f.returnHonest(e, "publisher", lend)
}

// A hello whose scope the node does not serve is refused naming the
// field, and the session ends: a scope that does not parse, a tenant
// the peer may not declare (by the node's configuration, whatever the
// engine says), no scope where the node requires one.
func TestHelloScopeRefusals(t *testing.T) {
	bad := scopeText(t, testScope())
	bad = bad[:len(bad)-1] // the tenant's ',' cut off
	stranger := testScope()
	stranger.Tenant = "globex"
	notMine := testScope()
	notMine.Tenant = "initech"
	noTenant := testScope()
	noTenant.Tenant = ""
	for _, tc := range []struct {
		name   string
		shape  func(*Config)
		scope  string
		code   nodewire.Code
		field  string
		saying string
	}{
		{"not a scope", nil, "model=llama", nodewire.CodeBadScope, "hello.scope", "kvscope1"},
		{"a scope cut short", nil, bad, nodewire.CodeBadScope, "hello.scope.tenant", "tenant"},
		{"a tenant no entry lists", ourTenants, scopeText(t, stranger), nodewire.CodeTenantNotAllowed, "hello.scope.tenant", `tenant "globex"`},
		{"a tenant listed for others", func(c *Config) {
			c.Tenants = []Tenant{{Name: "initech", UIDs: []uint32{uint32(os.Getuid()) + 1}, GIDs: []uint32{uint32(os.Getgid()) + 1}}}
		}, scopeText(t, notMine), nodewire.CodeTenantNotAllowed, "hello.scope.tenant", `tenant "initech"`},
		{"no tenant where its entry lists others", func(c *Config) {
			c.Tenants = []Tenant{{Name: "", UIDs: []uint32{uint32(os.Getuid()) + 1}}}
		}, scopeText(t, noTenant), nodewire.CodeTenantNotAllowed, "hello.scope.tenant", `tenant ""`},
		{"no scope where one is required", func(c *Config) { c.RequireScope = true }, "", nodewire.CodeScopeUnsupported, "hello.scope", "scoped sessions only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.shape)
			e := f.dial()
			req := e.send(&nodewire.Hello{Version: nodewire.Version, Engine: "e", Scope: tc.scope})
			r := e.expectRefused(req, tc.code, tc.field)
			assert.Contains(t, r.Message, tc.saying)
			e.expectGoodbye(tc.code)
			s := f.node.Stats()
			assert.EqualValues(t, 1, s.Refusals[tc.code])
			assert.Zero(t, s.Attached)
		})
	}
}

// Every peer may declare no tenant unless its entry says otherwise; a
// tenant is declared by the peer's uid or its gid; a session's stats
// say its scope's digest and tenant.
func TestHelloScopeAdmissions(t *testing.T) {
	f := newFixture(t, ourTenants)
	acme, beta, none := testScope(), testScope(), testScope()
	beta.Tenant, none.Tenant = "beta", ""
	for _, s := range []keys.Scope{acme, beta, none} {
		f.attachScoped("e-"+s.Tenant, scopeText(t, s))
	}
	f.attachScoped("unscoped", "")
	st := f.node.Stats()
	require.Len(t, st.PerEngine, 4)
	d, err := acme.Digest()
	require.NoError(t, err)
	assert.Equal(t, d.String(), st.PerEngine[0].Scope)
	assert.Equal(t, []string{"acme", "beta", "", ""},
		[]string{st.PerEngine[0].Tenant, st.PerEngine[1].Tenant, st.PerEngine[2].Tenant, st.PerEngine[3].Tenant})
	assert.Empty(t, st.PerEngine[3].Scope, "an unscoped session")
	sessions := map[string]int64{}
	for _, ts := range st.PerTenant {
		sessions[ts.Tenant] = ts.Sessions
	}
	assert.Equal(t, map[string]int64{"acme": 1, "beta": 1, "": 2}, sessions)
}
