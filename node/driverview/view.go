package driverview

import (
	"fmt"
	"sync"

	"github.com/kvshare/kvshare/contract"
)

// View is one lend's driver over the node's shared driver. It is a
// [contract.Driver]; [View.Driver] adds the optional interfaces the shared
// driver has. Every method is safe for concurrent use.
type View struct {
	ledger   *Shared // the shared driver's, with the record of its recycles
	shared   contract.Driver
	caps     contract.Capabilities
	looker   contract.Looker
	together contract.RegionsTogether
	recycler contract.Recycler
	shaped   contract.Driver // the view with the shared driver's optional interfaces

	mu          sync.Mutex
	regs        map[contract.Registration]*registration // every handle issued through the view
	index       *regionIndex                            // the regions of the live ones; replaced, never changed
	ops         map[*operation]struct{}                 // admitted, their access end not yet announced
	sweepAt     int                                     // len(ops) at which admission sweeps ended ones out
	lastAt      uint64                                  // the ledger's recycles started when the latest operation was admitted
	admittedAny bool                                    // the shared driver admitted an operation through the view

	admitting   int // Put and Get calls inside the shared driver now
	registering int // registrations inside the shared driver now
	lookups     int // lookups inside the shared driver now
	callbacks   int // onChange calls of the view's operations running now
	recycling   int // Recycles of the view running now

	drained   bool   // Drain was called: no more work
	drainedOK bool   // a Drain answered true: no callback from now on
	closed    bool   // Close succeeded
	broken    string // why the view can never prove its work ended ("" if it can)

	changed chan struct{} // closed and replaced when a waiter should look again
	waiting bool          // someone holds changed
}

var _ contract.Driver = (*View)(nil)

// New returns a view over shared. The view issues no call to shared
// until it is asked to; shared's Capabilities are read once, here. It
// shares no recycle ledger with other views: views over one driver that
// should know each other's recycles come from one [Shared].
func New(shared contract.Driver) *View { return NewShared(shared).View() }

func newView(s *Shared) *View {
	shared := s.drv
	v := &View{
		ledger:  s,
		shared:  shared,
		caps:    shared.Capabilities(),
		regs:    make(map[contract.Registration]*registration),
		index:   &regionIndex{},
		ops:     make(map[*operation]struct{}),
		sweepAt: sweepFloor,
		changed: make(chan struct{}),
	}
	v.looker, _ = shared.(contract.Looker)
	v.together, _ = shared.(contract.RegionsTogether)
	v.recycler = s.recycler
	v.shaped = shape(v)
	return v
}

// Capabilities returns the shared driver's, read once by New.
func (v *View) Capabilities() contract.Capabilities { return v.caps }

// Driver returns the view as a [contract.Driver] that implements
// exactly the optional interfaces the shared driver implements:
// [contract.Looker], [contract.RegionsTogether] and [contract.Recycler].
// Hand it to binding.Open; the same value every time.
func (v *View) Driver() contract.Driver { return v.shaped }

// usableLocked refuses new work (verb names it) once the view was
// drained or closed, or while its Recycle runs.
func (v *View) usableLocked(verb string) error {
	switch {
	case v.closed:
		return fmt.Errorf("%w: driverview: %s: the view is closed", contract.ErrDriverRejected, verb)
	case v.drained:
		return fmt.Errorf("%w: driverview: %s: the view was drained", contract.ErrDriverRejected, verb)
	case v.recycling > 0:
		return fmt.Errorf("%w: driverview: %s: the view is recycling the store client", contract.ErrDriverRejected, verb)
	}
	return nil
}

// breakLocked records that a call into the shared driver did not return
// (it panicked): what it left behind is unknown, so the view will never
// drain true or close.
func (v *View) breakLocked(what string) {
	if v.broken == "" {
		v.broken = what
	}
	v.broadcastLocked()
}

// broadcastLocked wakes everyone waiting on changed.
func (v *View) broadcastLocked() {
	if v.waiting {
		close(v.changed)
		v.changed = make(chan struct{})
		v.waiting = false
	}
}

// changedLocked returns the channel closed at the next broadcast.
func (v *View) changedLocked() <-chan struct{} {
	v.waiting = true
	return v.changed
}

// Stats is a snapshot of what a view holds now.
type Stats struct {
	// Operations counts the view's operations whose access end the view
	// has not seen announced: open, unprovable, or ended moments ago.
	Operations int
	// Unprovable counts those last seen Unprovable.
	Unprovable int
	// Lookups counts the view's lookups inside the shared driver (one
	// abandoned at its context's end included, until the store answers).
	Lookups int
	// Registrations counts the handles issued through the view and not
	// revoked.
	Registrations int
	// Drained: Drain was called; Closed: Close succeeded.
	Drained, Closed bool
}

// Stats returns what the view holds now.
func (v *View) Stats() Stats {
	v.mu.Lock()
	defer v.mu.Unlock()
	s := Stats{Operations: len(v.ops), Lookups: v.lookups, Drained: v.drained, Closed: v.closed}
	for o := range v.ops {
		if o.seenAccess() == contract.Unprovable {
			s.Unprovable++
		}
	}
	for _, r := range v.regs {
		if r.live {
			s.Registrations++
		}
	}
	return s
}
