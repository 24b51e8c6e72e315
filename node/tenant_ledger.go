package node

import (
	"maps"
	"slices"
	"sync"

	"github.com/kvshare/kvshare/nodewire"
)

// usage is what a tenant holds: bytes lent, slot bytes of attempts in
// flight, attempts in flight.
type usage struct {
	lent, bytes, attempts int64
}

func (u *usage) add(v usage) {
	u.lent += v.lent
	u.bytes += v.bytes
	u.attempts += v.attempts
}

// tenantLedger is every tenant's usage, checked against its limits
// before anything is taken: a request that would go over a limit takes
// nothing. Memory of an engine that left stays on its tenant's ledger
// until the node lets it go.
type tenantLedger struct {
	tenants map[string]Tenant // the configuration's, by name

	mu  sync.Mutex
	use map[string]*tenantUse
}

// tenantUse is one tenant's usage and its refusals.
type tenantUse struct {
	usage
	sessions   int64            // attached now
	refused    map[string]int64 // requests refused, by limit
	notAllowed int64            // hellos refused: the peer may not declare it
}

func newTenantLedger(ts []Tenant) *tenantLedger {
	l := &tenantLedger{tenants: map[string]Tenant{}, use: map[string]*tenantUse{}}
	for _, t := range ts {
		l.tenants[t.Name] = t
		l.use[t.Name] = &tenantUse{refused: map[string]int64{}}
	}
	return l
}

// useOf is name's usage, made on first use; under l.mu.
func (l *tenantLedger) useOf(name string) *tenantUse {
	u := l.use[name]
	if u == nil {
		u = &tenantUse{refused: map[string]int64{}}
		l.use[name] = u
	}
	return u
}

// declare admits a session of p declaring the tenant name, or refuses
// it (the peer may not declare it) naming the tenant.
func (l *tenantLedger) declare(name string, p peer) *refusal {
	t, listed := l.tenants[name]
	if !listed && name == "" || listed && t.mayDeclare(p) {
		l.mu.Lock()
		l.useOf(name).sessions++
		l.mu.Unlock()
		return nil
	}
	if listed { // a name nobody configured is counted node-wide only: any peer could invent names
		l.mu.Lock()
		l.useOf(name).notAllowed++
		l.mu.Unlock()
	}
	return refuse(nodewire.CodeTenantNotAllowed, "hello.scope.tenant",
		"tenant %q: the peer (uid %d, gid %d) may not declare it by the node's configuration", name, p.uid, p.gid)
}

// leave counts a session of the tenant out.
func (l *tenantLedger) leave(name string) {
	l.mu.Lock()
	l.useOf(name).sessions--
	l.mu.Unlock()
}

// take adds v to the tenant's usage, or refuses it, naming the limit
// and the tenant, when that would go over a limit; a refusal takes
// nothing.
func (l *tenantLedger) take(name string, v usage) *refusal {
	t := l.tenants[name]
	l.mu.Lock()
	defer l.mu.Unlock()
	u := l.useOf(name)
	for _, c := range []struct {
		limit      string
		max        int64
		now, asked int64
		unit       string
	}{
		{LimitLentBytes, t.MaxLentBytes, u.lent, v.lent, "bytes lent"},
		{LimitBytesInFlight, t.MaxBytesInFlight, u.bytes, v.bytes, "bytes in flight"},
		{LimitAttemptsInFlight, int64(t.MaxAttemptsInFlight), u.attempts, v.attempts, "attempts in flight"},
	} {
		if c.max > 0 && c.asked > 0 && c.now+c.asked > c.max {
			u.refused[c.limit]++
			return refuse(nodewire.CodeTenantLimit, "tenant."+c.limit,
				"tenant %q: %d %s and %d more asked, over its limit of %d", name, c.now, c.unit, c.asked, c.max)
		}
	}
	u.add(v)
	return nil
}

// give takes v off the tenant's usage.
func (l *tenantLedger) give(name string, v usage) {
	l.mu.Lock()
	l.useOf(name).add(usage{lent: -v.lent, bytes: -v.bytes, attempts: -v.attempts})
	l.mu.Unlock()
}

// TenantStats is one tenant's usage now and its refusals since the
// start: every tenant of the configuration, and "" once a session
// declared it.
type TenantStats struct {
	Tenant string
	// Sessions attached now that declared it.
	Sessions int64
	// LentBytes, BytesInFlight and AttemptsInFlight: what its sessions
	// hold now, those of engines that left included until the node let
	// their memory go.
	LentBytes, BytesInFlight, AttemptsInFlight int64
	// Refused counts the requests a limit of the tenant refused, by the
	// limit's name (LimitLentBytes, …).
	Refused map[string]int64
	// NotAllowed counts the hellos refused because the peer may not
	// declare the tenant.
	NotAllowed int64
}

// snapshot returns every tenant's stats, by name.
func (l *tenantLedger) snapshot() []TenantStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]TenantStats, 0, len(l.use))
	for _, name := range slices.Sorted(maps.Keys(l.use)) {
		u := l.use[name]
		out = append(out, TenantStats{
			Tenant: name, Sessions: u.sessions,
			LentBytes: u.lent, BytesInFlight: u.bytes, AttemptsInFlight: u.attempts,
			Refused: maps.Clone(u.refused), NotAllowed: u.notAllowed,
		})
	}
	return out
}
