package contract

import (
	"errors"
	"fmt"
)

// The errors of the contract. Each is wrapped with a reason; match them
// with [errors.Is].
var (
	// ErrInvalidSubmission: the view, hint or destination is wrong. Found
	// before any driver call; nothing was handed to the store.
	ErrInvalidSubmission = errors.New("kvshare: invalid submission")
	// ErrSubmissionRejected: the backend takes no more submissions (it
	// was shut down, or its driver broke the protocol). Nothing was handed
	// to the store.
	ErrSubmissionRejected = errors.New("kvshare: submission rejected")
	// ErrConstructionRejected: a binding could not be built, and nothing
	// escaped: no region is registered and the hold was released.
	ErrConstructionRejected = errors.New("kvshare: construction rejected")
	// ErrDriverRejected: a driver refused a call and certifies that
	// nothing escaped. From Put/Get: the call was not admitted. From
	// Register: nothing was registered. From Unregister: the region is
	// busy (or pinned by an unprovable operation) and stays registered.
	ErrDriverRejected = errors.New("kvshare: driver rejected")
	// ErrInvalidRegion: a region's geometry is unusable.
	ErrInvalidRegion = errors.New("kvshare: invalid region")
)

// RegistrationError is a failed registration that may not have been
// clean. A non-zero Registration means the registration may be live: the
// caller must keep the memory lent and revoke the handle (Unregister or
// UnregisterRegions) before letting the memory go. A zero Registration
// means nothing is live.
type RegistrationError struct {
	Registration Registration
	Err          error
}

func (e *RegistrationError) Error() string {
	if e.Registration != 0 {
		return fmt.Sprintf("kvshare: registration %d failed and may be live: %v", e.Registration, e.Err)
	}
	return fmt.Sprintf("kvshare: registration failed: %v", e.Err)
}

// Unwrap returns the underlying error.
func (e *RegistrationError) Unwrap() error { return e.Err }

// MayBeLive reports whether the failed registration may still be live.
func (e *RegistrationError) MayBeLive() bool { return e.Registration != 0 }
