package nodewire

import (
	"errors"
	"fmt"
)

// Code is an error code of the protocol: what a refusal, a fault or a
// goodbye was about. Codes are stable: a code once assigned keeps its
// number and meaning in every version. 0 is no code.
type Code uint16

// The error codes of version 1 (15 to 17 came with scopes: see
// PROTOCOL.md §11).
const (
	// CodeProtocol: a malformed or truncated frame, a flag set, an unknown
	// type, a request id 0, an fd where none is allowed, bytes left over.
	CodeProtocol Code = 1
	// CodeVersion: the hello's version is not one the node speaks.
	CodeVersion Code = 2
	// CodeNotAllowed: the peer's uid is not on the node's allow-list.
	CodeNotAllowed Code = 3
	// CodeBadLend: the lent fd is not a memfd, not sealed against
	// shrinking, smaller than the geometry, or the geometry is bad.
	CodeBadLend Code = 4
	// CodeLimitExceeded: a frame, attempts in flight, lent bytes or rows
	// over the node's limits.
	CodeLimitExceeded Code = 5
	// CodeUnknownLend: no lend of the engine has that id.
	CodeUnknownLend Code = 6
	// CodeOutOfRange: a region or slot outside the lend.
	CodeOutOfRange Code = 7
	// CodeBadNames: an empty name, ends that decrease, a names count that
	// differs from the rows count.
	CodeBadNames Code = 8
	// CodeBusy: a return of a lend with attempts in flight.
	CodeBusy Code = 9
	// CodeShuttingDown: the node is shutting down and takes no new work.
	CodeShuttingDown Code = 10
	// CodeScopeUnsupported: the node serves no session under the hello's
	// scope: an empty one where the node requires a scope (before scopes
	// had a meaning: any scope at all).
	CodeScopeUnsupported Code = 11
	// CodeDeadline: the attempt's deadline passed before its outcome was
	// known; the outcome was forced.
	CodeDeadline Code = 12
	// CodeStore: the store or its driver refused or failed.
	CodeStore Code = 13
	// CodeSlowReader: the engine stopped reading its replies.
	CodeSlowReader Code = 14
	// CodeBadScope: the hello's scope is not a scope's canonical
	// encoding, or a field of it is invalid (the refusal names it).
	CodeBadScope Code = 15
	// CodeTenantNotAllowed: the hello's scope names a tenant the peer's
	// credentials may not declare, by the node's configuration.
	CodeTenantNotAllowed Code = 16
	// CodeTenantLimit: the request would take its tenant over one of the
	// tenant's limits (lent bytes, bytes in flight, attempts in flight);
	// the refusal names the limit and the tenant.
	CodeTenantLimit Code = 17
)

// The sentinel of each code: every error this package returns, and every
// [RefusedError], matches exactly one of them with errors.Is.
var (
	ErrProtocol     = errors.New("nodewire: protocol error")
	ErrVersion      = errors.New("nodewire: version not supported")
	ErrNotAllowed   = errors.New("nodewire: peer not allowed")
	ErrBadLend      = errors.New("nodewire: bad lend")
	ErrLimit        = errors.New("nodewire: limit exceeded")
	ErrUnknownLend  = errors.New("nodewire: unknown lend")
	ErrOutOfRange   = errors.New("nodewire: out of range")
	ErrBadNames     = errors.New("nodewire: bad names")
	ErrBusy         = errors.New("nodewire: busy")
	ErrShuttingDown = errors.New("nodewire: shutting down")
	ErrScope        = errors.New("nodewire: scope not supported")
	ErrDeadline     = errors.New("nodewire: deadline passed")
	ErrStore        = errors.New("nodewire: store failed")
	ErrSlowReader   = errors.New("nodewire: slow reader")
	ErrBadScope     = errors.New("nodewire: bad scope")
	// ErrTenantNotAllowed: the peer may not declare the scope's tenant.
	ErrTenantNotAllowed = errors.New("nodewire: tenant not allowed")
	// ErrTenantLimit: a tenant's limit refused the request.
	ErrTenantLimit = errors.New("nodewire: tenant limit exceeded")
	// ErrUnknownCode matches a code this version does not define (one a
	// later node may send): treat it as a failure of unknown kind.
	ErrUnknownCode = errors.New("nodewire: unknown error code")
)

type codeInfo struct {
	name string
	err  error
}

var codes = [...]codeInfo{
	CodeProtocol:         {"protocol", ErrProtocol},
	CodeVersion:          {"version", ErrVersion},
	CodeNotAllowed:       {"not-allowed", ErrNotAllowed},
	CodeBadLend:          {"bad-lend", ErrBadLend},
	CodeLimitExceeded:    {"limit-exceeded", ErrLimit},
	CodeUnknownLend:      {"unknown-lend", ErrUnknownLend},
	CodeOutOfRange:       {"out-of-range", ErrOutOfRange},
	CodeBadNames:         {"bad-names", ErrBadNames},
	CodeBusy:             {"busy", ErrBusy},
	CodeShuttingDown:     {"shutting-down", ErrShuttingDown},
	CodeScopeUnsupported: {"scope-unsupported", ErrScope},
	CodeDeadline:         {"deadline", ErrDeadline},
	CodeStore:            {"store", ErrStore},
	CodeSlowReader:       {"slow-reader", ErrSlowReader},
	CodeBadScope:         {"bad-scope", ErrBadScope},
	CodeTenantNotAllowed: {"tenant-not-allowed", ErrTenantNotAllowed},
	CodeTenantLimit:      {"tenant-limit", ErrTenantLimit},
}

// Known reports whether this package defines c.
func (c Code) Known() bool { return c > 0 && int(c) < len(codes) }

// String returns the code's name in lower case ("bad-lend"), "none" for
// 0, or "code 42" for a code this version does not define.
func (c Code) String() string {
	switch {
	case c == 0:
		return "none"
	case c.Known():
		return codes[c].name
	}
	return fmt.Sprintf("code %d", uint16(c))
}

// Err returns the code's sentinel: nil for 0, [ErrUnknownCode] for a code
// this version does not define.
func (c Code) Err() error {
	switch {
	case c == 0:
		return nil
	case c.Known():
		return codes[c].err
	}
	return ErrUnknownCode
}

// CodeOf returns the code of err: the code of the first [RefusedError] or
// [FrameError] in its chain, else that of the first sentinel it matches,
// else 0 (nil, or an error the table does not name).
func CodeOf(err error) Code {
	if err == nil {
		return 0
	}
	if r, ok := errors.AsType[*RefusedError](err); ok {
		return r.Code
	}
	if f, ok := errors.AsType[*FrameError](err); ok {
		return f.Code
	}
	for c := Code(1); c.Known(); c++ {
		if errors.Is(err, codes[c].err) {
			return c
		}
	}
	return 0
}

// RefusedError is the node's refusal of a request, as a Go error: it
// matches its code's sentinel with errors.Is.
type RefusedError struct {
	Code Code
	// Field is the field or limit refused ("lend.slot_bytes").
	Field string
	// Message says why, for a person.
	Message string
}

func (e *RefusedError) Error() string {
	s := "nodewire: refused (" + e.Code.String() + ")"
	if e.Field != "" {
		s += ": " + e.Field
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is reports whether target is the sentinel of the refusal's code.
func (e *RefusedError) Is(target error) bool { return target != nil && target == e.Code.Err() }

// FrameError is a frame this package could not accept: its code (mostly
// [CodeProtocol]), the field that was wrong ("publish: group 2: names")
// and what was wrong with it. It matches its code's sentinel with
// errors.Is.
type FrameError struct {
	Code   Code
	Field  string
	Reason string
}

func frameErr(c Code, field, reason string) *FrameError {
	return &FrameError{Code: c, Field: field, Reason: reason}
}

func (e *FrameError) Error() string { return "nodewire: " + e.Field + ": " + e.Reason }

// Unwrap returns the code's sentinel.
func (e *FrameError) Unwrap() error { return e.Code.Err() }
