package broken_test

import (
	"context"
	"errors"
	"fmt"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/internal/testkeys"
)

// The scenes of lookups (contract.Looker), for the lookup rules: the
// main script makes none.
func init() { scenes = append(scenes, lookupScenes...) }

// lookupBatch is a lookup of names with the tests' key maker (the key
// is the name).
func lookupBatch(names ...string) contract.LookupBatch {
	b := contract.LookupBatch{Keys: testkeys.Plain{}}
	for _, n := range names {
		b.Names = append(b.Names, []byte(n))
	}
	return b
}

// lookup makes the scene driver's lookup of b, turning a panic into an
// error that says so.
func (s *stage) lookup(ctx context.Context, b contract.LookupBatch) (got []contract.Presence, err error) {
	defer func() {
		if p := recover(); p != nil {
			got, err = nil, fmt.Errorf("panicked: %v", p)
		}
	}()
	return s.drv.(contract.Looker).Lookup(ctx, b, nil)
}

// presence describes what a lookup answered: its presences, or an error
// and whether it wraps ErrDriverRejected.
func presence(got []contract.Presence, err error) string {
	if err != nil {
		return fmt.Sprintf("error (rejected: %v)", errors.Is(err, contract.ErrDriverRejected))
	}
	return fmt.Sprint(got)
}

// heldLookup starts a lookup of b with ctx on a goroutine of its own,
// for a lookup the store holds; its answer comes on the channel.
func (s *stage) heldLookup(ctx context.Context, b contract.LookupBatch) <-chan string {
	ch := make(chan string, 1)
	go func() { ch <- presence(s.lookup(ctx, b)) }()
	return ch
}

var lookupScenes = []scene{
	// A lookup of a stored key, an absent one, one another writer holds
	// and one a put of this driver is writing (held in the store).
	{"lookup", func(s *stage) {
		s.store.Set("present", object(slotBytes))
		finish := s.store.BeginWrite("writing")
		defer finish(nil)
		copy(s.mem.Slot(0), object(slotBytes))
		gate := s.inner.Hold(memdrv.PutDir)
		defer gate.Release()
		if op := s.put(nil, s.row(0, "own")); op != nil {
			require.NoError(s.t, gate.Held(s.t.Context()))
		}
		s.note("presence", presence(s.lookup(s.t.Context(), lookupBatch("present", "absent", "writing", "own"))))
	}},
	// A lookup of a key whose put crashed in the store.
	{"lookup-torn", func(s *stage) {
		copy(s.mem.Slot(0), object(slotBytes))
		s.inner.Crash(memdrv.PutDir)
		s.put(nil, s.row(0, "torn"))
		synctest.Wait()
		s.note("presence", presence(s.lookup(s.t.Context(), lookupBatch("torn"))))
	}},
	// A lookup held in the store: Drain while it is, its context's end,
	// the answer once the store let it go.
	{"lookup-held", func(s *stage) {
		gate := s.inner.HoldLookups()
		defer gate.Release()
		ctx, cancel := context.WithCancel(s.t.Context())
		defer cancel()
		answer := s.heldLookup(ctx, lookupBatch("held"))
		require.NoError(s.t, gate.Held(s.t.Context()))
		s.note("drain", s.drv.Drain(ended()))
		cancel()
		synctest.Wait()
		select {
		case a := <-answer:
			s.note("returned", true)
			s.note("presence", a)
			gate.Release()
		default:
			s.note("returned", false)
			gate.Release()
			s.note("presence", <-answer)
		}
		synctest.Wait()
		s.note("drain-after", s.drv.Drain(context.Background()))
	}},
	// A put admitted while a lookup is held in the store.
	{"lookup-beside", func(s *stage) {
		gate := s.inner.HoldLookups()
		defer gate.Release()
		ctx, cancel := context.WithCancel(s.t.Context())
		defer cancel()
		looked := s.heldLookup(ctx, lookupBatch("held"))
		require.NoError(s.t, gate.Held(s.t.Context()))
		copy(s.mem.Slot(0), object(slotBytes))
		admitted := make(chan string, 1)
		go func() {
			admitted <- answer(call(func() (contract.Operation, error) { return s.drv.Put(rows(s.row(0, "beside")), nil) }))
		}()
		synctest.Wait()
		select {
		case a := <-admitted:
			s.note("admitted", true)
			s.note("answer", a)
		default:
			s.note("admitted", false)
			gate.Release()
			s.note("answer", <-admitted)
		}
		cancel()
		synctest.Wait()
		gate.Release()
		s.note("presence", <-looked)
	}},
	// Lookups no driver can ask about, and one after a Drain.
	{"lookup-refusals", func(s *stage) {
		for label, b := range map[string]contract.LookupBatch{
			"no-keys":    {Names: [][]byte{[]byte("a")}},
			"empty-name": lookupBatch("a", ""),
			"twice":      lookupBatch("a", "b", "a"),
		} {
			s.note(label, presence(s.lookup(s.t.Context(), b)))
		}
		s.note("drain", s.drv.Drain(context.Background()))
		s.note("after-drain", presence(s.lookup(s.t.Context(), lookupBatch("a"))))
	}},
}
