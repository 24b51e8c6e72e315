package scheduler

import "errors"

// ErrStopped is wrapped by the error Submit returns once Stop has been
// called: the pool takes no new part.
var ErrStopped = errors.New("scheduler: pool stopped")

// ErrInvalid is wrapped by the errors New and Submit return for an
// argument they cannot use (a worker count below one, a nil run
// function, a Kind other than Get or Put). The wrapping error names the
// argument and its value.
var ErrInvalid = errors.New("scheduler: invalid argument")
