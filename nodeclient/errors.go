package nodeclient

import "errors"

// The client's own errors. What the node refuses comes back as a
// *nodewire.RefusedError, matched with errors.Is against nodewire's
// sentinels (nodewire.ErrLimit, nodewire.ErrOutOfRange, …; of scopes and
// tenants: nodewire.ErrBadScope, a scope that does not parse, naming the
// field; nodewire.ErrScope, no scope where the node requires one;
// nodewire.ErrTenantNotAllowed, a tenant the peer may not declare, at
// Dial; nodewire.ErrTenantLimit, a lend, publish or fetch over a limit
// of the session's tenant, the limit and the tenant named); a view or
// geometry the client refuses before sending anything wraps the same
// sentinel the node would have answered with (and, for a view,
// contract.ErrInvalidSubmission too).
var (
	// ErrClosed: the connection to the node is closed (Close, the node's
	// goodbye, or the connection lost). When the node said goodbye, the
	// error wraps the sentinel of its code as well
	// (nodewire.ErrShuttingDown, nodewire.ErrSlowReader, …).
	ErrClosed = errors.New("kvshare/nodeclient: connection to the node closed")
	// ErrHeld: the node answered a return with Held: it could not prove
	// every access to the lend ended, so it keeps its mapping, and the
	// client keeps its own (see Lend.Return).
	ErrHeld = errors.New("kvshare/nodeclient: the node holds the lend")
)

// errorsIsClosed reports whether err says the connection ended.
func errorsIsClosed(err error) bool { return errors.Is(err, ErrClosed) }
