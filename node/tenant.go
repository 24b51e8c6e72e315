package node

import (
	"fmt"
	"slices"
)

// Tenant is one tenant of the node's configuration: the peers that may
// declare it in their scope, and its limits over every session that
// declares it. The tenant comes from the node's configuration, not from
// the engine's word: a scope naming a tenant the peer may not declare is
// refused at the hello.
type Tenant struct {
	// Name is the tenant as a scope names it. "" is the tenant of the
	// sessions whose scope names none, and of unscoped sessions: without
	// an entry of its own every peer the node serves may declare it,
	// with no tenant limits.
	Name string
	// UIDs and GIDs: a peer whose uid, or whose gid (SO_PEERCRED), is
	// listed may declare the tenant. A named tenant lists at least one;
	// the entry of "" may list none (every peer the node serves).
	UIDs, GIDs []uint32
	// MaxLentBytes caps the bytes lent by the tenant's sessions at once,
	// every session's lends together, the lends the node keeps after
	// their engine returned or left them included; 0: no tenant limit.
	MaxLentBytes int64
	// MaxBytesInFlight caps the slot bytes (rows × slot bytes) of the
	// tenant's publishes and fetches accepted and not yet quiesced —
	// those of an engine that left included, until the node lets their
	// memory go; 0: no tenant limit.
	MaxBytesInFlight int64
	// MaxAttemptsInFlight caps the tenant's publishes and fetches
	// accepted and not yet quiesced, counted as MaxBytesInFlight is; 0:
	// no tenant limit.
	MaxAttemptsInFlight int
}

// The names of a tenant's limits, as a refusal's field ("tenant.<name>")
// and the node's stats give them.
const (
	LimitLentBytes        = "lent_bytes"
	LimitBytesInFlight    = "bytes_in_flight"
	LimitAttemptsInFlight = "attempts_in_flight"
)

// mayDeclare reports whether p may declare the tenant.
func (t *Tenant) mayDeclare(p peer) bool {
	if t.Name == "" && len(t.UIDs) == 0 && len(t.GIDs) == 0 {
		return true
	}
	return slices.Contains(t.UIDs, p.uid) || slices.Contains(t.GIDs, p.gid)
}

// checkTenants refuses a tenant list no node can serve: a name twice, a
// named tenant nobody may declare, a negative limit.
func checkTenants(ts []Tenant) error {
	seen := map[string]bool{}
	for i, t := range ts {
		field := fmt.Sprintf("Tenants[%d] (%q)", i, t.Name)
		switch {
		case seen[t.Name]:
			return fmt.Errorf("%w: %s: the tenant is listed twice", ErrConfig, field)
		case t.Name != "" && len(t.UIDs) == 0 && len(t.GIDs) == 0:
			return fmt.Errorf("%w: %s: neither UIDs nor GIDs: no peer could declare it", ErrConfig, field)
		case t.MaxLentBytes < 0:
			return fmt.Errorf("%w: %s: MaxLentBytes is negative", ErrConfig, field)
		case t.MaxBytesInFlight < 0:
			return fmt.Errorf("%w: %s: MaxBytesInFlight is negative", ErrConfig, field)
		case t.MaxAttemptsInFlight < 0:
			return fmt.Errorf("%w: %s: MaxAttemptsInFlight is negative", ErrConfig, field)
		}
		seen[t.Name] = true
	}
	return nil
}
