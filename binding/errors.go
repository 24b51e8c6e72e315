package binding

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kvshare/kvshare/contract"
)

// The binding's own errors. Each is wrapped with a reason; match them with
// [errors.Is] or [errors.As].
var (
	// ErrRegistrationMayBeLive: a registration failed in a way that may
	// have left it live, so the hold is kept. It comes from [Bind] inside
	// a [*LiveRegistrationError], and from [Regions.Unbind] when a
	// registration can never be revoked.
	ErrRegistrationMayBeLive = errors.New("kvshare/binding: a registration may be live; the hold is kept")

	// ErrOutcomeForced is the fault of an outcome the backend set before
	// every call's results were known: by Shutdown, or at the attempt's
	// deadline (the fault then wraps [ErrDeadline] too). Rows whose
	// results were not known then are undelivered, whatever the driver
	// says later.
	ErrOutcomeForced = errors.New("kvshare/binding: outcome forced")

	// ErrRowFault is the fault of an outcome stopped by a row the driver
	// answered Fault. The wrapping text names the group, row and key.
	ErrRowFault = errors.New("kvshare/binding: row fault")

	// ErrConfig: New was given something it cannot build a backend from.
	// Nothing was registered or released; the regions stay the caller's.
	ErrConfig = errors.New("kvshare/binding: bad backend config")

	// ErrOwned: [Regions.Unbind] was called on a binding a [Backend]
	// owns. Nothing was unregistered or released; the backend unbinds
	// the regions itself after Shutdown.
	ErrOwned = errors.New("kvshare/binding: the regions belong to a backend")

	// ErrDriverOpen: the Unbind of a failed [Open]'s
	// [*LiveRegistrationError] revoked every registration and released
	// the hold — the memory is free again — but the driver did not drain
	// within its context, so it is still open (undrained, unclosed). A
	// later Unbind drains and closes it.
	ErrDriverOpen = errors.New("kvshare/binding: the driver is still open")
)

// SubmissionError is a view, hint or destination the backend refused
// before any driver call. It wraps [contract.ErrInvalidSubmission]. Group
// and Row locate what was wrong; either is -1 when the fault is not in
// one group or one row.
type SubmissionError struct {
	Group, Row int
	Reason     string
}

// Error returns "kvshare: invalid submission: group G row R: reason",
// leaving out the group or row when it is -1.
func (e *SubmissionError) Error() string {
	var b strings.Builder
	b.WriteString(contract.ErrInvalidSubmission.Error())
	b.WriteString(": ")
	if e.Group >= 0 {
		fmt.Fprintf(&b, "group %d", e.Group)
		if e.Row >= 0 {
			fmt.Fprintf(&b, " row %d", e.Row)
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Unwrap returns [contract.ErrInvalidSubmission].
func (e *SubmissionError) Unwrap() error { return contract.ErrInvalidSubmission }

func invalid(group, row int, format string, args ...any) error {
	return &SubmissionError{Group: group, Row: row, Reason: fmt.Sprintf(format, args...)}
}

// ViolationError is a driver breaking the protocol the contract package
// lays down: what it did, and in which call. The backend holds that call
// as unprovable, and every later submission gets an error wrapping
// [contract.ErrSubmissionRejected] and this error.
type ViolationError struct {
	// Rule says what the driver did, e.g. "Put panicked".
	Rule string
	// Call names the call: its attempt, group and rows.
	Call string
	// Detail is the panic value or error, when there was one.
	Detail string
}

// Error names the rule broken, the call, and the detail when there is
// one.
func (e *ViolationError) Error() string {
	s := "kvshare/binding: driver broke the protocol: " + e.Rule + " (" + e.Call + ")"
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// LiveRegistrationError is what [Bind] returns when a registration may be
// live: the driver answered with a [*contract.RegistrationError] that
// carries a handle, or with an error that certifies nothing, or an
// earlier registration could not be rolled back. The hold is kept. Held
// names what is held; Err is the driver's answer.
//
// Unbind revokes every handle still held, retrying refusals until ctx
// ends, and releases the hold once all are confirmed revoked. A failure
// that left no handle can never be revoked: then Unbind fails with
// [ErrRegistrationMayBeLive] and the hold is kept for good.
type LiveRegistrationError struct {
	Held    []string
	Err     error
	regions *Regions
	driver  *ownedDriver // Open's driver, closed after a successful Unbind; nil from Bind
}

// Error names what is held and the driver's answer.
func (e *LiveRegistrationError) Error() string {
	return fmt.Sprintf("%v: holding %s: %v", ErrRegistrationMayBeLive, strings.Join(e.Held, ", "), e.Err)
}

// Unwrap returns [ErrRegistrationMayBeLive] and the driver's error.
func (e *LiveRegistrationError) Unwrap() []error { return []error{ErrRegistrationMayBeLive, e.Err} }

// Unbind revokes what is held and then releases the hold; see
// [Regions.Unbind]. For an error of [Open], it then drains and closes
// the driver; every step runs under ctx, the context of this call. When
// the driver does not drain, the error wraps [ErrDriverOpen] (and ctx's
// error if ctx ended): the memory is free again, the driver still open,
// and calling Unbind again drains and closes it. It is safe to call from
// several goroutines at once; each waits within its own context.
func (e *LiveRegistrationError) Unbind(ctx context.Context) error {
	if err := e.regions.Unbind(ctx); err != nil {
		return err
	}
	if e.driver == nil {
		return nil
	}
	if err := e.driver.close(ctx, true); err != nil {
		return fmt.Errorf("%w: every registration is revoked and the hold released, so the memory is free again; "+
			"the driver is not closed (Unbind again drains and closes it): %w", ErrDriverOpen, err)
	}
	return nil
}
