package node

import (
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/nodewire"
)

// sessionScope is what a hello's scope makes of a session: the scope
// every key of it is made under (the zero Scope: none), the stem of
// those keys, and the tenant it declared.
type sessionScope struct {
	scope  keys.Scope
	stem   keys.Stem
	tenant string
}

// scopeOf reads a hello's scope: empty, the node's own stem (unless the
// node requires a scope); else the scope's canonical encoding, refused
// naming the field when it is not one, and its tenant refused when the
// peer may not declare it. The tenant is not admitted yet: see
// tenantLedger.declare.
func (n *Node) scopeOf(text string) (sessionScope, *refusal) {
	if text == "" {
		if n.cfg.RequireScope {
			return sessionScope{}, refuse(nodewire.CodeScopeUnsupported, "hello.scope",
				"none given; this node serves scoped sessions only: declare the scope of the engine's KV (model, revision, dtype, layout, tenant)")
		}
		return sessionScope{stem: n.stem}, nil
	}
	s, err := keys.ParseScope(text)
	if err != nil {
		field := "hello.scope"
		if se, ok := errors.AsType[*keys.ScopeError](err); ok {
			field += "." + se.Field
		}
		return sessionScope{}, refuse(nodewire.CodeBadScope, field, "%v", err)
	}
	stem, err := keys.NewScopedStem(n.cfg.KeyPrefix, s)
	if err != nil { // the prefix was checked at New, the scope just now
		return sessionScope{}, refuse(nodewire.CodeBadScope, "hello.scope", "%v", err)
	}
	return sessionScope{scope: s, stem: stem, tenant: s.Tenant}, nil
}

// String is how logs show the scope: its digest, or "none".
func (s sessionScope) String() string {
	if d, ok := s.stem.Scope(); ok {
		return fmt.Sprintf("%v (tenant %q)", d, s.tenant)
	}
	return "none"
}
