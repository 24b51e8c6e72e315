package conformance

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/broken"
)

// The in-memory driver is the suite's reference: every check must pass
// against it. Its broken drivers are the suite's self-test: the check
// paired with each must fail.

// memSubject is driver drv, whose scenario hooks are those of d, over
// store s, with every hook the in-memory driver can stage.
func memSubject(drv contract.Driver, d *memdrv.Driver, s *memdrv.Store) *Subject {
	return &Subject{
		Driver:         drv,
		Seed:           s.Set,
		Object:         s.Object,
		Writing:        s.BeginWrite,
		Full:           func() { s.SetCapacity(max(s.Bytes(), 1)) },
		Hold:           func(dir Direction) Gate { return d.Hold(dir) },
		HoldKeys:       func(dir Direction, keys ...string) KeyGate { return d.HoldKeys(dir, keys...) },
		Crash:          d.Crash,
		FailReads:      d.FailReads,
		UnprovableGets: d.UnprovableGets,
		FinishStrays:   func() { d.FinishStrays() },
		Pause:          d.Pause,
		// memdrv holds every lookup: its lookups never carry a put's or
		// a get's store call.
		HoldLookups: func(...string) Gate { return d.HoldLookups() },
		FailLookups: d.FailLookups,
		// memdrv stages a failure that may be live as the driver's own
		// answer: the region is registered, and the error carries its
		// handle. A TogetherDriver over d stages a batch's.
		FailNextRegistration: func(batch bool) {
			if batch {
				(&memdrv.TogetherDriver{Driver: d}).FailNextRegistration(true)
				return
			}
			d.FailNextRegister(&contract.RegistrationError{Registration: 1, Err: errLostAnswer})
		},
	}
}

// errLostAnswer is the failure memdrv's FailNextRegistration stages.
var errLostAnswer = errors.New("the store's answer to the registration was lost")

// memHarness builds a fresh store and memdrv driver (a TogetherDriver
// when together is set) with options o for every check.
func memHarness(o memdrv.Options, together bool) Harness {
	o = quiet(o)
	return Harness{New: func() (*Subject, error) {
		s := memdrv.NewStore()
		if together {
			td := memdrv.NewTogether(s, o)
			return memSubject(td, td.Driver, s), nil
		}
		d := memdrv.New(s, o)
		return memSubject(d, d, s), nil
	}}
}

// boundedHarness is memHarness over a bounded store (a cache of 4 MiB
// taken up front, memdrv.NewBoundedStore, in chunks of one slot),
// thorough: its objects' memory is reused once no get reads it, which
// the suite's watch of memory after access ends would see misused. Its
// Full hook is SetFull (a bounded store evicts rather than refuse a put
// beyond a capacity). evicting fills the store with objects of its own
// before each check, so that every put and seed of the check evicts the
// least recently used of them.
func boundedHarness(o memdrv.Options, evicting bool) Harness {
	o = quiet(o)
	const slot, chunks = 4096, 1024
	return Harness{Thorough: true, Wait: time.Second, SlotBytes: slot, New: func() (*Subject, error) {
		s, err := memdrv.NewBoundedStore(memdrv.StoreOptions{Capacity: chunks * slot, ChunkBytes: slot})
		if err != nil {
			return nil, err
		}
		if evicting {
			filler := make([]byte, slot)
			for i := range chunks {
				s.Set(fmt.Sprintf("filler/%d", i), filler)
			}
		}
		d := memdrv.New(s, o)
		sub := memSubject(d, d, s)
		sub.Full = s.SetFull
		return sub, nil
	}}
}

// brokenHarness builds a fresh store and a driver breaking rule, with
// options o, for every check; one that registers batches of regions for
// a rule of batches.
func brokenHarness(rule broken.Rule, o memdrv.Options) Harness {
	o = quiet(o)
	return Harness{New: func() (*Subject, error) {
		s := memdrv.NewStore()
		if rule.Together() {
			d, err := broken.NewTogether(rule, s, o)
			if err != nil {
				return nil, err
			}
			return memSubject(d, d.Inner(), s), nil
		}
		d, err := broken.New(rule, s, o)
		if err != nil {
			return nil, err
		}
		return memSubject(d, d.Inner(), s), nil
	}}
}

// quiet sends the driver's logs (a staged crash logs an error) nowhere.
func quiet(o memdrv.Options) memdrv.Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
