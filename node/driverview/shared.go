package driverview

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/kvshare/kvshare/contract"
)

// Shared is the node's one shared driver with the ledger of its
// recycles: the views made by [Shared.View] share it, so a recycle of the
// store client, whoever started it, is known to every one of them. A
// view whose operations not yet ended were all admitted before a recycle
// that started after them and ended every access has nothing left for
// another recycle to end: its own Recycle then answers as that recycle
// did, without recycling again (see [Shared.Recycle]).
type Shared struct {
	drv      contract.Driver
	recycler contract.Recycler // nil when drv is none

	mu      sync.Mutex
	started uint64 // recycles started, numbered from 1 in the order they start
	covered uint64 // the highest number of a recycle that ended every access
	closed  error  // the answer of a recycle that ended every access and closed the driver
}

// NewShared returns the ledger over drv, the node's shared driver.
func NewShared(drv contract.Driver) *Shared {
	s := &Shared{drv: drv}
	s.recycler, _ = drv.(contract.Recycler)
	return s
}

// View returns a new view over the shared driver that shares the ledger.
func (s *Shared) View() *View { return newView(s) }

// Recycle recycles the shared driver's store client once, for every
// view: the driver refuses every view's work while it runs, ends
// Cancelled the rows no worker took, waits for those inside the store,
// tears the client down and ends every operation admitted before it
// ([contract.Recycler]'s rules). Its answer passes through; a driver
// that is no Recycler is refused with an error wrapping
// [contract.ErrDriverRejected].
//
// When it returns nil or an error wrapping [contract.ErrRecycledClosed],
// a view's own Recycle afterwards (binding's Reclaim of that view's
// lend) recycles nothing again while every operation it holds not seen
// Ended was admitted before this one started: it answers as this one
// did, at once.
func (s *Shared) Recycle(ctx context.Context) error {
	if s.recycler == nil {
		return fmt.Errorf("%w: driverview: recycle: the shared driver (%T) is no contract.Recycler", contract.ErrDriverRejected, s.drv)
	}
	s.mu.Lock()
	s.started++
	number := s.started
	s.mu.Unlock()
	err := s.recycler.Recycle(ctx)
	if err == nil || errors.Is(err, contract.ErrRecycledClosed) {
		s.mu.Lock()
		s.covered = max(s.covered, number)
		if err != nil && s.closed == nil {
			s.closed = err
		}
		s.mu.Unlock()
	}
	return err
}

// admitted is the number to note on an operation the shared driver
// admitted just now: only a recycle numbered above it certainly started
// after the admission.
func (s *Shared) admitted() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// coveredBy reports whether a recycle that started after an admission
// numbered at has ended every access, and that recycle's answer
// (nil, or the error wrapping ErrRecycledClosed once the driver closed).
func (s *Shared) coveredBy(at uint64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.covered > at, s.closed
}
