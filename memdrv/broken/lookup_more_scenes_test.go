package broken_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// The scenes of the further lookup rules: lookups beside puts that ended
// other than Ready or are still queued, a store that fails to answer, a
// lookup after a Drain that answered false, and keys built from a
// lookup's names after it returned. (A lookup after Close is the main
// script's, after its Close.)
func init() { scenes = append(scenes, lookupMoreScenes...) }

var lookupMoreScenes = []scene{
	// A lookup of a key whose put a full store declined.
	{"lookup-declined", func(s *stage) {
		s.store.SetFull()
		copy(s.mem.Slot(0), object(slotBytes))
		op := s.put(nil, s.row(0, "declined"))
		synctest.Wait()
		s.rows("rows", op)
		s.note("presence", presence(s.lookup(s.t.Context(), lookupBatch("declined"))))
	}},
	// A lookup the store fails to answer for one of its names.
	{"lookup-fails", func(s *stage) {
		s.store.Set("stored", object(slotBytes))
		s.inner.FailLookups("failing")
		s.note("presence", presence(s.lookup(s.t.Context(), lookupBatch("stored", "failing", "absent"))))
	}},
	// A lookup after a Drain that answered false: a put is held in the
	// store, and Drain is asked with a context already ended.
	{"lookup-false-drain", func(s *stage) {
		copy(s.mem.Slot(0), object(slotBytes))
		gate := s.inner.Hold(memdrv.PutDir)
		defer gate.Release()
		if op := s.put(nil, s.row(0, "held")); op != nil {
			require.NoError(s.t, gate.Held(s.t.Context()))
		}
		s.note("drain", s.drv.Drain(ended()))
		s.note("after", presence(s.lookup(s.t.Context(), lookupBatch("after"))))
	}},
	// Keys built from a lookup's names after it returned: the next call
	// is a Drain.
	{"lookup-names-late", func(s *stage) {
		keys := &countingKeys{}
		s.note("presence", presence(s.lookup(s.t.Context(), contract.LookupBatch{Keys: keys, Names: [][]byte{[]byte("a"), []byte("b")}})))
		before := keys.n.Load()
		s.note("drain", s.drv.Drain(context.Background()))
		s.note("keys-after-return", keys.n.Load()-before)
	}},
	// A lookup of a key whose put no worker took yet (workers paused),
	// then, the put cancelled, of the same key again.
	{"lookup-queued", func(s *stage) {
		resume := s.inner.Pause()
		defer resume()
		copy(s.mem.Slot(0), object(slotBytes))
		op := s.put(nil, s.row(0, "queued"))
		s.note("presence", presence(s.lookup(s.t.Context(), lookupBatch("queued"))))
		if op == nil {
			return
		}
		op.Cancel()
		synctest.Wait()
		s.rows("rows", op)
		s.note("presence-cancelled", presence(s.lookup(s.t.Context(), lookupBatch("queued"))))
	}},
}

// presenceAfterClose describes a lookup made after the driver's Close,
// for the main script's teardown.
func presenceAfterClose(t *testing.T, drv contract.Driver) string {
	l, ok := drv.(contract.Looker)
	if !ok {
		return "no lookup"
	}
	return presence(l.Lookup(t.Context(), lookupBatch("after-close"), nil))
}
