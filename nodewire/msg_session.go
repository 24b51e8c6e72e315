package nodewire

// MaxEngineName is the longest engine name a hello may carry, in bytes.
const MaxEngineName = 64

// Hello opens a session: the engine's first frame.
type Hello struct {
	// Version is the protocol version the engine speaks: [Version].
	Version uint16
	// Engine names the engine, for the node's logs and counters: 1 to
	// [MaxEngineName] bytes of UTF-8.
	Engine string
	// Scope is the canonical text encoding of the scope every key of
	// the session is made under (module keys: Scope.MarshalText), or
	// empty for none. The node parses it: one it cannot is refused with
	// CodeBadScope, a tenant the peer may not declare with
	// CodeTenantNotAllowed, an empty one where the node requires a scope
	// with CodeScopeUnsupported.
	Scope string
}

// Welcome accepts a hello: the node's version, its pid and its limits.
type Welcome struct {
	Version uint16
	NodePID uint32
	// MaxFrame is the largest body, in bytes, the node accepts in a frame.
	MaxFrame uint32
	// MaxAttempts is how many publishes and fetches of the engine may be
	// in flight (accepted, not yet quiesced) at once.
	MaxAttempts uint32
	// MaxRows is the most rows a publish, fetch or lookup may carry.
	MaxRows uint32
	// MaxLendBytes is the most bytes the engine may have lent at once,
	// over all its lends.
	MaxLendBytes uint64
}

// ClientGoodbye tells the node the engine is closing the session.
type ClientGoodbye struct {
	Reason string
}

// NodeGoodbye is the node's last frame before a close it starts: why
// (Code, never 0, and Reason), and what it still holds of the engine's
// lends because access could not be proven ended. Its request id is 0.
type NodeGoodbye struct {
	Code      Code
	Reason    string
	HeldBytes uint64
	HeldLends uint32
}

// Refused answers a request the node refuses: the code (never 0), the
// field or limit refused ("lend.slot_bytes") and why.
type Refused struct {
	Code    Code
	Field   string
	Message string
}

// Err returns the refusal as a *[RefusedError].
func (m *Refused) Err() error {
	return &RefusedError{Code: m.Code, Field: m.Field, Message: m.Message}
}

func (*Hello) Type() Type         { return TypeHello }
func (*Welcome) Type() Type       { return TypeWelcome }
func (*ClientGoodbye) Type() Type { return TypeClientGoodbye }
func (*NodeGoodbye) Type() Type   { return TypeNodeGoodbye }
func (*Refused) Type() Type       { return TypeRefused }

func (m *Hello) AppendBody(b []byte) []byte {
	b = appendU16(b, m.Version)
	b = appendStr(b, m.Engine)
	return appendStr(b, m.Scope)
}

func (m *Welcome) AppendBody(b []byte) []byte {
	b = appendU16(b, m.Version)
	b = appendU32(b, m.NodePID)
	b = appendU32(b, m.MaxFrame)
	b = appendU32(b, m.MaxAttempts)
	b = appendU32(b, m.MaxRows)
	return appendU64(b, m.MaxLendBytes)
}

func (m *ClientGoodbye) AppendBody(b []byte) []byte { return appendStr(b, m.Reason) }

func (m *NodeGoodbye) AppendBody(b []byte) []byte {
	b = appendU16(b, uint16(m.Code))
	b = appendStr(b, m.Reason)
	b = appendU64(b, m.HeldBytes)
	return appendU32(b, m.HeldLends)
}

func (m *Refused) AppendBody(b []byte) []byte {
	b = appendU16(b, uint16(m.Code))
	b = appendStr(b, m.Field)
	return appendStr(b, m.Message)
}
