package hostmem

import (
	"errors"
	"fmt"
)

// Hold is one loan's hold on a [Memory]: while it is held the memory
// stays mapped. Take one with [Memory.Hold] for each loan (binding's
// Loan.Hold) before lending; the borrower calls Release once no store can
// touch the memory through that loan. Its methods are safe for
// concurrent use.
type Hold struct {
	m *Memory
	// guarded by m.mu
	released bool
	keptBy   error // kept for good, and why
}

// Hold takes a new hold on the memory, for one loan, and counts it:
// [Memory.Free] is refused until every hold taken is released. It is
// refused with an error wrapping [ErrFreed] after Free: freed memory
// cannot be lent.
func (m *Memory) Hold() (*Hold, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.freed {
		return nil, fmt.Errorf("%w: no hold on %d bytes unmapped already", ErrFreed, len(m.mem))
	}
	m.holds.taken++
	return &Hold{m: m}, nil
}

// Release is the hold's release: the borrower calls it once no store can
// touch the memory through this loan. A second Release does nothing.
func (h *Hold) Release() {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	if !h.released {
		h.released = true
		h.m.holds.released++
	}
}

// Released reports whether the hold was released.
func (h *Hold) Released() bool {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	return h.released
}

// KeepForGood marks the hold as kept for good, with why (the error
// binding's Close answered, matching ErrHeldForGood): the memory's Free
// is refused from now on, whatever happens (a release after this
// proves nothing), naming why. The memory stays mapped for the life of
// the process. Only the first reason is kept.
func (h *Hold) KeepForGood(why error) {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	if h.keptBy != nil {
		return
	}
	if why == nil {
		why = errors.New("kept for good")
	}
	h.keptBy = why
	h.m.holds.kept++
	if h.m.holds.why == nil {
		h.m.holds.why = why
	}
}

// holdCount is what a Memory knows of its holds; guarded by its mutex.
type holdCount struct {
	taken, released, kept int
	why                   error // the first hold kept for good's reason
}

// refusal is why Free must not unmap n bytes now, or nil.
func (c holdCount) refusal(n int64) error {
	switch {
	case c.kept > 0:
		return fmt.Errorf("%w: %d of %d holds kept for good (%v): %d bytes stay mapped", ErrLent, c.kept, c.taken, c.why, n)
	case c.released < c.taken:
		return fmt.Errorf("%w: %d of %d holds not released, so a store may still touch these %d bytes "+
			"(the backend a hold was lent to releases it once no store can; a hold never lent is released by its Release)",
			ErrLent, c.taken-c.released, c.taken, n)
	}
	return nil
}
