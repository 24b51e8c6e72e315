package node

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/patience"
)

// tenantOf returns tenant name's stats.
func tenantOf(t *testing.T, s Stats, name string) TenantStats {
	t.Helper()
	return named(t, s.PerTenant, name, func(ts TenantStats) string { return ts.Tenant })
}

// limited is a node whose tenant acme, declared by this process, has
// the limits of lim.
func limited(lim Tenant) func(*Config) {
	return func(c *Config) {
		lim.Name, lim.UIDs = "acme", []uint32{uint32(os.Getuid())}
		c.Tenants = []Tenant{lim}
	}
}

// Each tenant limit, over the tenant's sessions together: served up to
// the limit, refused at it naming the limit and the tenant, with no
// effect at all (no mapping, no attempt, nothing in the store, the
// tenant's usage as it was), and served again once usage went back
// below it.
func TestTenantLimits(t *testing.T) {
	const slotBytes = 512
	lendBytes := int64(nodewire.PageSize) // one region of 8 slots of 512 bytes
	for _, tc := range []struct {
		name  string
		limit Tenant
		field string
		// fill takes the tenant to its limit over two engines; over
		// asks one more of the limited thing and returns the request;
		// drop goes back below the limit.
		// untouched checks what the refused request named was not.
		run func(t *testing.T, f *fixture, a, b *testEngine) (over func() (req uint64, untouched func()), drop func())
	}{
		{"lent bytes", Tenant{MaxLentBytes: 2 * lendBytes}, "tenant.lent_bytes",
			func(t *testing.T, f *fixture, a, b *testEngine) (func() (uint64, func()), func()) {
				la, _ := a.lend(slotBytes, 8, 1)
				b.lend(slotBytes, 8, 1)
				return func() (uint64, func()) {
						m := newMemfd(t, slotBytes, 8, 1, 0, unix.F_SEAL_SHRINK)
						return b.sendFD(m.lendMsg(), m.fd), func() {
							assert.Equal(t, 1, m.mappings(t), "the node never mapped the refused lend")
						}
					}, func() {
						f.returnHonest(a, "a", la)
					}
			}},
		{"bytes in flight", Tenant{MaxBytesInFlight: 4 * slotBytes}, "tenant.bytes_in_flight",
			func(t *testing.T, f *fixture, a, b *testEngine) (func() (uint64, func()), func()) {
				return heldPublishes(t, f, a, b, []int{1, 3}, 1)
			}},
		{"attempts in flight", Tenant{MaxAttemptsInFlight: 2}, "tenant.attempts_in_flight",
			func(t *testing.T, f *fixture, a, b *testEngine) (func() (uint64, func()), func()) {
				return heldPublishes(t, f, a, b, []int{1, 1}, 1)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, limited(tc.limit))
			scope := scopeText(t, testScope())
			a, b := f.attachScoped("a", scope), f.attachScoped("b", scope)
			over, drop := tc.run(t, f, a, b)
			before := f.node.Stats()
			req, untouched := over()
			r := b.expectRefused(req, nodewire.CodeTenantLimit, tc.field)
			assert.Contains(t, r.Message, `tenant "acme"`)
			after := f.node.Stats()
			assert.Equal(t, before.Lends, after.Lends, "no lend made")
			assert.Equal(t, before.LentBytes, after.LentBytes)
			assert.Equal(t, before.Attempts, after.Attempts, "no attempt accepted")
			ta, tb := tenantOf(t, before, "acme"), tenantOf(t, after, "acme")
			assert.Equal(t, [3]int64{ta.LentBytes, ta.BytesInFlight, ta.AttemptsInFlight}, [3]int64{tb.LentBytes, tb.BytesInFlight, tb.AttemptsInFlight}, "the tenant's usage unchanged")
			assert.EqualValues(t, 1, tb.Refused[tc.field[len("tenant."):]], "the refusal counted by its limit")
			assert.EqualValues(t, 1, after.Refusals[nodewire.CodeTenantLimit])

			drop()
			untouched()
			f.waitNode("usage below the limit", func(s Stats) bool {
				u := tenantOf(t, s, "acme")
				return u.LentBytes < ta.LentBytes || u.BytesInFlight < ta.BytesInFlight || u.AttemptsInFlight < ta.AttemptsInFlight
			})
			again, _ := over()
			m := b.replyTo(again)
			assert.NotEqual(t, nodewire.TypeRefused, m.Type(), "served below the limit: %+v", m)
		})
	}
}

// replyTo reads frames until the first that answers request, passing
// over the replies to the engine's other requests.
func (e *testEngine) replyTo(request uint64) nodewire.Message {
	e.t.Helper()
	for {
		h, m, err := e.read()
		require.NoError(e.t, err)
		if h.Request == request {
			return m
		}
	}
}

// heldPublishes lends on a and b and publishes rows[i] rows from each,
// held inside the store, taking the tenant to its limit; over asks a
// publish of more rows on b; drop lets the store go and waits for a's
// and b's publishes to quiesce. The gate is released at the test's end
// too.
func heldPublishes(t *testing.T, f *fixture, a, b *testEngine, rows []int, more int) (func() (uint64, func()), func()) {
	gate := f.store.HoldTransfers(memdrv.PutDir)
	t.Cleanup(gate.Release)
	la, _ := a.lend(512, 8, 1)
	lb, _ := b.lend(512, 8, 1)
	ra := a.transfer(contract.PutDir, la, 0, seq(rows[0]), names(t.Name()+"/a", rows[0]))
	rb := b.transfer(contract.PutDir, lb, 0, seq(rows[1]), names(t.Name()+"/b", rows[1]))
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	require.NoError(t, gate.Held(ctx))
	n := 0
	return func() (uint64, func()) {
			n++
			ns := names(t.Name()+"/over", 8)[n*more-more : n*more]
			req := b.send(&nodewire.Transfer{Dir: contract.PutDir, Lend: lb, Groups: []nodewire.Group{{Region: 0, Slots: seq(more), Names: ns}}})
			return req, func() {
				_, held := f.store.Object(f.scopedKey(testScope(), ns[0]))
				assert.False(t, held, "the refused publish wrote nothing")
			}
		}, func() {
			gate.Release()
			a.settle(ra)
			b.settle(rb)
		}
}

// Memory the node keeps for an engine that left — its lend mapped, its
// publish held inside the store — counts against the engine's tenant
// until the node lets it go: another session of the tenant is refused
// over the limit meanwhile, and served once the store let the row go
// and the node unmapped the lend; the tenant's usage is then zero.
func TestADeadEnginesMemoryCountsAgainstItsTenant(t *testing.T) {
	lendBytes := int64(nodewire.PageSize)
	f := newFixture(t, func(c *Config) {
		giveUpAtOnce(c)
		limited(Tenant{MaxLentBytes: lendBytes})(c)
	})
	scope := scopeText(t, testScope())
	doomed := f.attachScoped("doomed", scope)
	id, _ := doomed.lend(512, 8, 1)
	gate := f.store.HoldTransfers(memdrv.PutDir)
	defer gate.Release()
	doomed.transfer(contract.PutDir, id, 0, seq(2), names("doomed", 2))
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	require.NoError(t, gate.Held(ctx))
	require.NoError(t, doomed.c.Close()) // as a killed engine's socket closes

	s := f.waitNode("the lend kept", func(s Stats) bool { return s.Engines == 0 && s.HeldLends == 1 })
	u := tenantOf(t, s, "acme")
	assert.Equal(t, TenantStats{Tenant: "acme", LentBytes: lendBytes, BytesInFlight: 2 * 512, AttemptsInFlight: 1, Refused: map[string]int64{}}, u)

	next := f.attachScoped("next", scope)
	m := newMemfd(t, 512, 8, 1, 0, unix.F_SEAL_SHRINK)
	r := next.expectRefused(next.sendFD(m.lendMsg(), m.fd), nodewire.CodeTenantLimit, "tenant.lent_bytes")
	assert.Contains(t, r.Message, `tenant "acme": 4096 bytes lent`)

	gate.Release()
	s = f.waitNode("the kept lend unmapped", func(s Stats) bool { return s.HeldLends == 0 && s.LentBytes == 0 })
	u = tenantOf(t, s, "acme")
	assert.Zero(t, u.LentBytes)
	assert.Zero(t, u.BytesInFlight)
	assert.Zero(t, u.AttemptsInFlight)
	next.lend(512, 8, 1)
}

// A tenant list no node can serve is refused, naming the entry.
func TestTenantConfigRefusals(t *testing.T) {
	drv := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	me := []uint32{1000}
	for _, tc := range []struct {
		name    string
		tenants []Tenant
		want    string
	}{
		{"a name twice", []Tenant{{Name: "a", UIDs: me}, {Name: "a", GIDs: me}}, `Tenants[1] ("a"): the tenant is listed twice`},
		{"nobody may declare it", []Tenant{{Name: "a"}}, `Tenants[0] ("a"): neither UIDs nor GIDs`},
		{"negative lent bytes", []Tenant{{Name: "a", UIDs: me, MaxLentBytes: -1}}, "MaxLentBytes is negative"},
		{"negative bytes in flight", []Tenant{{Name: "", MaxBytesInFlight: -1}}, `Tenants[0] (""): MaxBytesInFlight is negative`},
		{"negative attempts", []Tenant{{Name: "a", UIDs: me, MaxAttemptsInFlight: -1}}, "MaxAttemptsInFlight is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(Config{Driver: drv, Tenants: tc.tenants})
			require.ErrorIs(t, err, ErrConfig)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
