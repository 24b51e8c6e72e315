package broken_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/broken"
)

// dumpDeviations (KVSHARE_DUMP_DEVIATIONS set to anything) makes
// TestEachRuleDeviatesOnlyAtItsTrigger log every label where each rule's
// driver differs from memdrv's, a rule without declared deviations
// included: how a new rule's deviations are found before they are pinned
// in deviations.
var dumpDeviations = os.Getenv("KVSHARE_DUMP_DEVIATIONS") != ""

// trace is what a driver did through the script of [walk]: an
// observation by label ("get-long/memory": a digest of the region).
type trace map[string]string

// build returns a fresh driver over a fresh store, and the memdrv
// driver whose scenario hooks stage what the driver does.
type build func() (contract.Driver, *memdrv.Driver, *memdrv.Store)

// walk runs one fixed script against drivers that build returns and
// reports what it saw. Every step starts from a region painted with
// fillByte and uses keys of its own, so a deviation in one step does not
// leak into the next. The script ends with the owner's cleanup. An
// unprovable get pins its driver for good, so it runs on a second driver
// and region, which stay lent. Then come the scenes (see scene), each on
// a driver and region of its own.
func walk(t *testing.T, b build) trace {
	drv, inner, store := b()
	tr := trace{"caps": fmt.Sprint(drv.Capabilities())}
	mem := paint(t, slotBytes, 8)
	reg, err := drv.Register(mem.Region)
	require.NoError(t, err)
	row := func(m *memdrv.Memory, slot int, name string) contract.Row {
		return contract.Row{Name: []byte(name), Spans: []contract.Span{m.Region.Slot(slot)}}
	}

	// every counts every callback of the script; counted returns a
	// callback that counts in c too.
	every := new(counter)
	counted := func(c *counter) func() { return func() { c.inc(); every.inc() } }

	// step starts a call (through start, with a counting callback),
	// lets the driver settle, and records the answer, the state, the
	// callbacks and the region's bytes.
	step := func(name string, start func(onChange func()) (contract.Operation, error)) contract.Operation {
		for i := range mem.Bytes {
			mem.Bytes[i] = fillByte
		}
		calls := new(counter)
		op, err := call(func() (contract.Operation, error) { return start(counted(calls)) })
		tr[name+"/answer"] = answer(op, err)
		if op == nil {
			return nil
		}
		synctest.Wait()
		st := op.Poll(nil)
		tr[name+"/rows"] = fmt.Sprint(st.Rows)
		tr[name+"/access"] = st.Access.String()
		tr[name+"/callbacks"] = fmt.Sprint(calls.get())
		tr[name+"/memory"] = fmt.Sprintf("%x", sha256.Sum256(mem.Bytes))
		return op
	}
	put := func(rs ...contract.Row) func(func()) (contract.Operation, error) {
		return func(f func()) (contract.Operation, error) { return drv.Put(rows(rs...), f) }
	}
	get := func(rs ...contract.Row) func(func()) (contract.Operation, error) {
		return func(f func()) (contract.Operation, error) { return drv.Get(rows(rs...), nil, f) }
	}

	// Puts: two new keys, and a key another writer holds.
	op := step("put", func(f func()) (contract.Operation, error) {
		copy(mem.Slot(0), object(slotBytes))
		copy(mem.Slot(1), object(slotBytes/2))
		return put(row(mem, 0, "put-a"), row(mem, 1, "put-b"))(f)
	})
	if op != nil {
		tr["put/rows-again"] = fmt.Sprint(op.Poll(nil).Rows)
	}
	for _, k := range []string{"put-a", "put-b"} {
		obj, ok := store.Object(k)
		tr["put/store/"+k] = fmt.Sprintf("%v %x", ok, sha256.Sum256(obj))
	}
	finish := store.BeginWrite("put-writing")
	step("put-writing", put(row(mem, 0, "put-writing")))
	finish(nil)

	// Gets of every kind of object.
	store.Set("exact", object(slotBytes))
	if op := step("get-exact", get(row(mem, 2, "exact"))); op != nil {
		tr["get-exact/rows-again"] = fmt.Sprint(op.Poll(nil).Rows)
	}
	store.Set("short", object(slotBytes/2))
	step("get-short", get(row(mem, 2, "short")))
	store.Set("long", object(slotBytes+slotBytes/2))
	step("get-long", get(row(mem, 2, "long")))
	step("get-absent", get(row(mem, 2, "absent")))
	finish = store.BeginWrite("get-writing")
	step("get-writing", get(row(mem, 2, "get-writing")))
	finish(nil)

	// Refusals at admission.
	twice := rows(row(mem, 0, "twice"), row(mem, 1, "twice"))
	tr["refused/put"] = answer(call(func() (contract.Operation, error) { return drv.Put(twice, nil) }))
	tr["refused/get"] = answer(call(func() (contract.Operation, error) { return drv.Get(twice, nil, nil) }))

	// Cancel of rows no worker took.
	resume := inner.Pause()
	step("cancel", func(f func()) (contract.Operation, error) {
		defer resume()
		op, err := get(row(mem, 4, "cancel-a"), row(mem, 5, "cancel-b"))(f)
		if op != nil {
			op.Cancel()
		}
		return op, err
	})

	// An unprovable get, on a driver and region of their own that stay
	// lent.
	udrv, uinner, ustore := b()
	pinned := paint(t, slotBytes, 1)
	preg, err := udrv.Register(pinned.Region)
	require.NoError(t, err)
	ustore.Set("unprovable", object(slotBytes))
	uinner.UnprovableGets("unprovable")
	if op := step("unprovable", func(f func()) (contract.Operation, error) {
		return udrv.Get(rows(row(pinned, 0, "unprovable")), nil, f)
	}); op != nil {
		tr["unprovable/access-again"] = op.Poll(nil).Access.String()
	}
	tr["unprovable/unregister"] = errText(udrv.Unregister(preg))
	tr["unprovable/drain"] = fmt.Sprint(udrv.Drain(context.Background()))
	tr["unprovable/free"] = errText(pinned.Free())

	// A get held at the store, and one queued behind a pause: busy
	// region, Drain within a deadline, which cancels the queued get.
	store.Set("held", object(slotBytes))
	gate := inner.Hold(memdrv.GetDir)
	calls := new(counter)
	op, err = call(func() (contract.Operation, error) { return drv.Get(rows(row(mem, 3, "held")), nil, counted(calls)) })
	tr["held/answer"] = answer(op, err)
	if op != nil {
		require.NoError(t, gate.Held(t.Context()))
		resume := inner.Pause()
		queued, err := call(func() (contract.Operation, error) {
			return drv.Get(rows(row(mem, 6, "queued-a"), row(mem, 7, "queued-b")), nil, counted(new(counter)))
		})
		tr["held/queued-answer"] = answer(queued, err)
		tr["held/access"] = op.Poll(nil).Access.String()
		tr["held/unregister"] = errText(drv.Unregister(reg))
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		tr["held/drain"] = fmt.Sprint(drv.Drain(ctx))
		cancel()
		if queued != nil {
			tr["held/queued-rows"] = fmt.Sprint(queued.Poll(nil).Rows)
		}
		resume()
	}
	gate.Release()
	synctest.Wait()
	if op != nil {
		st := op.Poll(nil)
		tr["held/rows"] = fmt.Sprint(st.Rows)
		tr["held/access-final"] = st.Access.String()
		tr["held/callbacks"] = fmt.Sprint(calls.get())
		tr["held/memory"] = fmt.Sprintf("%x", sha256.Sum256(mem.Bytes))
	}

	// The owner's cleanup. A callback after the Drain that returned true
	// is late.
	tr["teardown/drain"] = fmt.Sprint(drv.Drain(context.Background()))
	before := every.get()
	tr["teardown/unregister"] = errText(drv.Unregister(reg))
	tr["teardown/close"] = errText(drv.Close())
	tr["teardown/lookup-after-close"] = presenceAfterClose(t, drv)
	time.Sleep(time.Second) // a callback a little late is late too
	synctest.Wait()
	tr["teardown/late-callbacks"] = fmt.Sprint(every.get() - before)
	tr["teardown/free"] = errText(mem.Free())

	for _, sc := range scenes {
		sc.run(t, b, tr)
	}
	return tr
}

// call runs a Put or Get, turning a panic into an error that says so.
func call(f func() (contract.Operation, error)) (op contract.Operation, err error) {
	defer func() {
		if p := recover(); p != nil {
			op, err = nil, fmt.Errorf("panicked: %v", p)
		}
	}()
	return f()
}

// answer describes what a Put or Get answered: an operation, or an error
// and whether it wraps ErrDriverRejected.
func answer(op contract.Operation, err error) string {
	switch {
	case err != nil && strings.HasPrefix(err.Error(), "panicked"):
		return "panic"
	case err != nil:
		return fmt.Sprintf("error (rejected: %v)", errors.Is(err, contract.ErrDriverRejected))
	case op == nil:
		return "nil operation"
	}
	return "operation"
}

// errText is "nil", or the sentinels err wraps that the script tells
// apart.
func errText(err error) string {
	if err == nil {
		return "nil"
	}
	var found []string
	for _, s := range []error{contract.ErrDriverRejected, memdrv.ErrRegionBusy, memdrv.ErrMemoryLent} {
		if errors.Is(err, s) {
			found = append(found, s.Error())
		}
	}
	return "error: " + strings.Join(found, ", ")
}

// deviations says, for each rule, which observations of the script its
// driver must get wrong: all of them, and no other. A rule's deviation
// shows where its trigger is and nowhere else; everywhere else the
// driver is memdrv's.
var deviations = map[broken.Rule]func(label string) bool{
	broken.WrongResultCount: func(l string) bool {
		return strings.HasSuffix(l, "/rows") || strings.HasSuffix(l, "/rows-again") || l == "held/queued-rows"
	},
	// Without callbacks no worker is held inside one, so callback-drain's
	// Drain answers true, and Close after it succeeds; a Recycle's
	// callbacks see nothing, since none come.
	broken.NoOnChange: func(l string) bool {
		return strings.HasSuffix(l, "/callbacks") || l == "callback-drain/drain" || l == "callback-drain/close" || l == "recycle-callbacks/seen"
	},
	broken.OnChangeAfterDrain:      is("teardown/late-callbacks"),
	broken.AccessEndsBeforeResults: is("held/access", "cancel-running/access", "sibling-fault/access"),
	broken.ResultsChangeAfterFinal: is("put/rows-again", "get-exact/rows-again", "after-end-get/rows-again", "after-end-put/rows-again"),
	broken.UnregisterWhileBusy:     is("held/unregister", "unprovable/unregister", "queued-unregister/unregister", "later-row/unregister"),
	broken.DrainTrueWhileLive:      is("held/drain", "deadline-drain/drain", "lookup-false-drain/drain"),
	broken.UnwrappedError:          is("refused/put", "refused/get", "callback-drain/answer", "deadline-drain/after"),
	broken.WritesOutsideSpan:       is("get-exact/memory", "held/memory", "after-end-get/memory", "cancel-running/memory"),
	broken.LongObjectSpills:        is("get-long/memory"),
	broken.ShortObjectReady:        is("get-short/rows"),
	broken.ReadyForAbsent:          is("get-absent/rows", "mixed/rows"),
	broken.IgnoresCancel:           is("cancel/rows", "cancel/callbacks", "lookup-queued/rows", "lookup-queued/presence-cancelled"),
	broken.UnprovableNotTerminal:   is("unprovable/access-again", "unprovable-later/access-after-wait"),
	// Put panics: every scene that starts with a put shows it, but
	// callback-drain's Unregister, of a region idle either way.
	broken.PanicsInPut: func(l string) bool {
		for _, p := range []string{"put/", "put-writing/", "after-end-put/", "second-put/", "deadline-drain/", "names-late/", "cancel-after-drain/",
			"recycle-gives-up/put-", "recycle-gives-up/recycle", "recycle-gives-up/unprovable", "lookup-queued/"} {
			if strings.HasPrefix(l, p) {
				return true
			}
		}
		return is("refused/put", "late-callbacks/answer", "callback-drain/answer", "callback-drain/drain", "callback-drain/close",
			"lookup/answer", "lookup/presence", "lookup-torn/answer", "lookup-beside/answer",
			"lookup-declined/answer", "lookup-declined/rows", "lookup-false-drain/answer", "lookup-false-drain/drain")(l)
	},
	// Get admits nothing: every scene of gets shows it, but drain-lock's
	// callbacks, which poll only an operation they were given, the
	// memory of after-end-get, which its get would not have touched, and
	// the Capabilities of caps-after-crash, whose get never crashed.
	broken.NilOperation: func(l string) bool {
		for _, p := range []string{"get-", "cancel/", "unprovable/", "held/", "cancel-running/", "mixed/", "queued-unregister/", "later-row/", "sibling-fault/",
			"together-busy/", "unprovable-later/",
			"recycle-strays/", "recycle-callbacks/", "recycle-during/",
			"recycle-gives-up/get-", "recycle-gives-up/recycle", "recycle-gives-up/unprovable"} {
			if strings.HasPrefix(l, p) {
				return true
			}
		}
		return is("refused/get", "drain-lock/answer", "after-end-get/answer", "after-end-get/rows", "after-end-get/rows-again", "caps-after-crash/answer")(l)
	},
	broken.GetWritesAfterEnd:           is("after-end-get/memory"),
	broken.PutRereadsAfterEnd:          is("after-end-put/store"),
	broken.CancelEndsRunningRow:        is("cancel-running/access", "cancel-running/rows"),
	broken.UnregisterIgnoresQueued:     is("queued-unregister/unregister", "later-row/unregister"),
	broken.DrainIgnoresCallbacks:       is("callback-drain/drain"),
	broken.DrainTrueWhenDeadline:       is("held/drain", "deadline-drain/drain"),
	broken.DrainTrueUnprovableWithTime: is("unprovable/drain"),
	broken.AdmitsAfterFalseDrain:       is("callback-drain/answer", "lookup-false-drain/after"),
	broken.CloseAfterFalseDrain:        is("callback-drain/close"),
	broken.RowsReversed:                is("mixed/rows", "sibling-fault/rows"),
	broken.SecondPutReady:              is("second-put/rows"),
	broken.LateOnChangeAfterDrain:      is("teardown/late-callbacks", "late-callbacks/count"),
	broken.DrainCallbackUnderLock:      is("drain-lock/stuck"),
	broken.DeviceRefused:               is("caps", "caps-after-crash/caps", "caps-after-recycle/caps"),
	broken.UnregisterFirstRowOnly:      is("later-row/unregister"),
	broken.AdmitsAfterDrainDeadline:    is("held/queued-rows", "deadline-drain/after"),
	broken.EndsAtFirstFault:            is("sibling-fault/access", "sibling-fault/rows"),
	broken.NamesAfterEnd:               is("names-late/keys-after-end"),
	broken.CancelCallsBack:             is("cancel/callbacks", "cancel-after-drain/late-callbacks"),
	// Every lookup that answers shows a presence too few.
	broken.WrongLookupCount: is("lookup/presence", "lookup-torn/presence", "lookup-held/presence", "lookup-beside/presence",
		"lookup-declined/presence", "lookup-fails/presence", "lookup-names-late/presence", "lookup-queued/presence", "lookup-queued/presence-cancelled"),
	broken.AdmitsLookupAfterDrain: is("lookup-refusals/after-drain", "lookup-false-drain/after", "teardown/lookup-after-close"),
	// The crashed put left no object: absent too.
	broken.PresentForAbsent: is("lookup/presence", "lookup-torn/presence",
		"lookup-declined/presence", "lookup-fails/presence", "lookup-names-late/presence", "lookup-queued/presence-cancelled"),
	broken.LookupRowsReversed:  is("lookup/presence", "lookup-fails/presence"),
	broken.PresentWhileWriting: is("lookup/presence"),
	broken.PresentForOwnPut:    is("lookup/presence", "lookup-queued/presence"),
	broken.PresentForTorn:      is("lookup-torn/presence"),
	// A held lookup returns only once the store let it go, with the
	// store's answer.
	broken.LookupIgnoresDeadline:      is("lookup-held/returned", "lookup-held/presence", "lookup-beside/presence"),
	broken.DrainTrueWhileLookupInside: is("lookup-held/drain"),
	// The put waits for the held lookup, so the scene lets the lookup go
	// before its context ends: the store's answer.
	broken.LookupBlocksAdmission: is("lookup-beside/admitted", "lookup-beside/presence"),
	// The further lookup rules, each where its scene stages it; a put
	// that crashed or was declined or cancelled keeps reading InFlight.
	broken.PresentForDeclined:     is("lookup-declined/presence"),
	broken.AbsentWhenLookupFails:  is("lookup-fails/presence"),
	broken.LookupAfterFalseDrain:  is("lookup-false-drain/after"),
	broken.LookupAfterClose:       is("teardown/lookup-after-close"),
	broken.LookupNamesAfterReturn: is("lookup-names-late/keys-after-return"),
	broken.QueuedPutNotInFlight:   is("lookup-queued/presence"),
	broken.InFlightAfterPutEnded:  is("lookup-torn/presence", "lookup-declined/presence", "lookup-queued/presence-cancelled"),

	broken.TogetherBusyLastOnly:         is("together-busy/unregister"),
	broken.CleanRefusalWhenLive:         is("register-live/error", "register-live-together/error"),
	broken.UnprovableEndsLater:          is("unprovable-later/access-after-wait"),
	broken.CapabilitiesChangeAfterCrash: is("caps-after-crash/caps", "caps-after-recycle/caps"),

	broken.RecycleStopsOneTransfer:  is("recycle-strays/finished", "recycle-strays/memory"),
	broken.RecycleCallsBackFirst:    is("recycle-callbacks/seen"),
	broken.RecycleGivesUpEndsAccess: is("recycle-gives-up/unprovable"),
	broken.RecycleAfterClose:        is("recycle-after-close/recycle"),
	broken.UnregisterDuringRecycle:  is("recycle-during/unregister"),
}

func is(labels ...string) func(string) bool {
	return func(l string) bool { return slices.Contains(labels, l) }
}

// TestEachRuleDeviatesOnlyAtItsTrigger runs the same script against
// memdrv's driver and against every broken driver, and compares what
// they did observation by observation: each broken driver differs
// exactly where its rule says, and behaves like memdrv everywhere else.
// Both register batches of regions too (memdrv.NewTogether and
// broken.NewTogether), so that the rules of batches show.
func TestEachRuleDeviatesOnlyAtItsTrigger(t *testing.T) {
	quiet := memdrv.Options{Logger: slog.New(slog.DiscardHandler)}
	var want trace
	synctest.Test(t, func(t *testing.T) {
		want = walk(t, func() (contract.Driver, *memdrv.Driver, *memdrv.Store) {
			s := memdrv.NewStore()
			d := memdrv.NewTogether(s, quiet)
			return d, d.Driver, s
		})
	})
	// What memdrv did is what the contract asks; a few anchors show that
	// the script reached each trigger.
	for label, v := range map[string]string{
		"put/rows":                "[ready ready]",
		"put/callbacks":           "2",
		"put-writing/rows":        "[not-ready]",
		"get-exact/rows":          "[ready]",
		"get-short/rows":          "[fault]",
		"get-long/rows":           "[fault]",
		"get-absent/rows":         "[miss]",
		"get-writing/rows":        "[not-ready]",
		"cancel/rows":             "[cancelled cancelled]",
		"refused/put":             "error (rejected: true)",
		"refused/get":             "error (rejected: true)",
		"unprovable/access":       "unprovable",
		"unprovable/access-again": "unprovable",
		"unprovable/unregister":   "error: " + contract.ErrDriverRejected.Error() + ", " + memdrv.ErrRegionBusy.Error(),
		"unprovable/drain":        "false",
		"unprovable/free":         "error: " + memdrv.ErrMemoryLent.Error(),
		"held/access":             "open",
		"held/unregister":         "error: " + contract.ErrDriverRejected.Error() + ", " + memdrv.ErrRegionBusy.Error(),
		"held/drain":              "false",
		"held/rows":               "[ready]",
		"held/queued-rows":        "[cancelled cancelled]",
		"teardown/drain":          "true",
		"teardown/unregister":     "nil",
		"teardown/close":          "nil",
		"teardown/late-callbacks": "0",
		"teardown/free":           "nil",
	} {
		require.Equal(t, v, want[label], "memdrv's %s", label)
	}

	for _, rule := range broken.AllRules() {
		t.Run(string(rule), func(t *testing.T) {
			deviates, ok := deviations[rule]
			if !ok && dumpDeviations {
				deviates, ok = func(string) bool { return false }, true
			}
			require.True(t, ok, "no deviation declared for rule %s", rule)
			var got trace
			synctest.Test(t, func(t *testing.T) {
				got = walk(t, func() (contract.Driver, *memdrv.Driver, *memdrv.Store) {
					s := memdrv.NewStore()
					d, err := broken.NewTogether(rule, s, quiet)
					require.NoError(t, err)
					return d, d.Inner(), s
				})
			})
			shown := 0
			for _, label := range slices.Sorted(maps.Keys(union(want, got))) {
				w, wok := want[label]
				g, gok := got[label]
				differs := w != g || wok != gok
				if dumpDeviations && differs {
					t.Logf("DEV %s %s", rule, label)
				}
				if deviates(label) {
					shown++
					assert.True(t, differs, "%s: the deviation does not show: %s is %q, as memdrv's", rule, label, g)
				} else {
					assert.False(t, differs, "%s: deviates outside its rule: %s is %q (present %v), memdrv's %q", rule, label, g, gok, w)
				}
			}
			assert.Positive(t, shown, "%s: the script never reached the trigger", rule)
		})
	}
}

func union(a, b trace) trace {
	u := maps.Clone(a)
	maps.Copy(u, b)
	return u
}
