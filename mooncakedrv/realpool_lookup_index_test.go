package mooncakedrv

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/patience"
)

// The driver declares PresenceFromIndex: a lookup's Present says the
// master's metadata lists a complete object, and a get made then may
// still fault, for the master learns that a provider is gone only when
// the provider's client_ttl runs out. These tests hold the driver's
// lookups to that meaning while a provider is frozen, or killed with
// replicas 2, and measure the window: from the fault to the first
// lookup that no longer answers Present (docs/design/mooncakedrv.md,
// "Lookups while a provider is lost").

// indexTTL is the master's client_ttl in these tests: Mooncake's
// default, set explicitly so that the window measured is the one a
// deployment with the defaults sees.
const indexTTL = 10 * time.Second

// indexRound is one look at the names: the index's answer for each
// (get_size: the object's size while the master lists a complete
// replica) just before the driver's lookup, the lookup's answers, and
// the index's answers just after.
type indexRound struct {
	at            time.Duration // since the fault
	before, after []mooncakesdk.Code
	got           []contract.Presence
}

// indexWatch looks at names, round after round, through a driver's
// lookup and a raw client's get_size, and holds every round to the
// meaning of Present under PresenceFromIndex.
type indexWatch struct {
	t     *testing.T
	r     *realRig
	sizer mooncakesdk.Sizer
	names []string
	size  mooncakesdk.Code // every object's size
	since time.Time

	rounds  int
	present int             // Present answers since the fault
	gone    []time.Duration // per name: the first round it did not read Present (-1: not yet)
	first   time.Duration   // the first round any name did not read Present (-1: not yet)
}

func newIndexWatch(t *testing.T, r *realRig, sizer mooncakesdk.Sizer, names []string, size int64) *indexWatch {
	w := &indexWatch{t: t, r: r, sizer: sizer, names: names, size: mooncakesdk.Code(size), first: -1, gone: make([]time.Duration, len(names))}
	for i := range w.gone {
		w.gone[i] = -1
	}
	return w
}

// start marks the fault: rounds from now on are timed from it.
func (w *indexWatch) start() { w.since = time.Now() }

// sizes asks get_size for every name.
func (w *indexWatch) sizes() []mooncakesdk.Code {
	out := make([]mooncakesdk.Code, len(w.names))
	for i, n := range w.names {
		out[i] = sizeCode(w.t, w.sizer, w.r.key(n))
	}
	return out
}

// round looks once and holds the answers to the meaning of Present:
// Present only while the index lists a complete object (get_size asked
// just before answered its size: the index never lists again what it
// dropped, so an answer after the drop cannot be Present), never
// InFlight (nothing writes these keys), and once a name read other
// than Present, never Present again.
func (w *indexWatch) round() indexRound {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience.Wait())
	defer cancel()
	var rd indexRound
	rd.before = w.sizes()
	b := contract.LookupBatch{Keys: w.r.stem}
	for _, n := range w.names {
		b.Names = append(b.Names, []byte(n))
	}
	got, err := w.r.drv.Lookup(ctx, b, nil)
	require.NoError(w.t, err)
	rd.got = got
	rd.after = w.sizes()
	if !w.since.IsZero() {
		rd.at = time.Since(w.since)
		w.rounds++
	}
	for i, x := range got {
		switch {
		case x == contract.InFlight:
			w.t.Errorf("%v after the fault: %s reads in-flight: nothing writes it", rd.at, w.names[i])
		case x == contract.Present && rd.before[i] != w.size:
			w.t.Errorf("%v after the fault: %s reads present, yet the index, asked just before, answered %v: Present means the index holds the whole object", rd.at, w.names[i], rd.before[i])
		case x == contract.Absent && rd.after[i] == w.size:
			w.t.Errorf("%v after the fault: %s reads absent, yet the index, asked just after, still lists the whole object", rd.at, w.names[i])
		}
		switch {
		case x == contract.Present && w.gone[i] >= 0:
			w.t.Errorf("%v after the fault: %s reads present again, after it read otherwise at %v", rd.at, w.names[i], w.gone[i])
		case x == contract.Present && !w.since.IsZero():
			w.present++
		case x != contract.Present && w.gone[i] < 0 && !w.since.IsZero():
			w.gone[i] = rd.at
			if w.first < 0 {
				w.first = rd.at
			}
		}
	}
	return rd
}

// allGone reports whether every name has read other than Present.
func (w *indexWatch) allGone() bool {
	for _, g := range w.gone {
		if g < 0 {
			return false
		}
	}
	return true
}

// last is when the last name first read other than Present.
func (w *indexWatch) last() time.Duration {
	var m time.Duration
	for _, g := range w.gone {
		m = max(m, g)
	}
	return m
}

// The rounds' pace: a round at most this often (a sample of the
// window, not a wait for anything). The killed provider's rounds are
// slower: each -800 makes the library log a line.
const (
	frozenRoundEvery = 10 * time.Millisecond
	killedRoundEvery = 100 * time.Millisecond
)

// indexBound bounds a wait for the master to drop what a provider held:
// its client_ttl, plus the tests' patience.
func indexBound(t *testing.T, what string, moved func() bool) (context.Context, context.CancelFunc) {
	return patience.Bound{Span: indexTTL + patience.Wait(), What: t.Name() + ": " + what, Moved: moved, Logf: t.Logf}.Context(context.Background())
}

// With the only provider frozen (SIGSTOP), the master keeps listing its
// objects until its client_ttl runs out: lookups answer Present for
// that long, each while the index lists the whole object, and a get of
// one of them, made as the provider froze, ends Fault (-800, its access
// unprovable) or Ready with the whole object, never anything else. Once
// the master dropped the provider, every lookup answers Absent. The
// window, from the freeze to the first lookup that no longer answers
// Present, is measured and logged.
func TestRealLookupWhileTheProviderIsFrozen(t *testing.T) {
	s := startRealStore(t, func(o *pool.Options) { o.ClientTTL = indexTTL })
	const rows, slotBytes = 16, 64 << 10
	r := openRealRig(t, s, rows, slotBytes, "kvshare-realpool/lookup-frozen")
	require.True(t, r.drv.Capabilities().PresenceFromIndex)
	names := replicaRows(r, "frozen", rows)
	require.Equal(t, statuses(contract.Ready, rows), r.put(names, span(0, rows)...).Rows)
	raw := openRawClient(t, s)
	sizer, ok := raw.c.(mooncakesdk.Sizer)
	require.True(t, ok, "the purego client answers get_size")
	w := newIndexWatch(t, r, sizer, names, slotBytes)
	require.Equal(t, everyName(contract.Present, rows), w.round().got, "the pool healthy: every name Present")

	fetch := openRealRigOver(t, s, keptMemory(t, 1, slotBytes), "kvshare-realpool/lookup-frozen")
	require.NoError(t, s.pool.Freeze())
	resumed := false
	defer func() {
		if !resumed {
			assert.NoError(t, s.pool.Resume())
		}
	}()
	w.start()
	f, ch := notify()
	op, err := fetch.drv.Get(fetch.batch(names[:1], 0), nil, f)
	require.NoError(t, err)
	fetched := make(chan contract.OpState, 1)
	go func() { fetched <- settleUntil(op, ch) }()

	ctx, cancel := indexBound(t, "the master dropping the frozen provider's objects", nil)
	defer cancel()
	var st contract.OpState
	var fetchedAt time.Duration
	pace := time.NewTicker(frozenRoundEvery)
	defer pace.Stop()
	for fetchedAt == 0 || !w.allGone() {
		<-pace.C
		if ctx.Err() != nil {
			t.Fatalf("after %v (%d rounds) the master still listed %d of %d objects of the frozen provider: its client_ttl is %v", time.Since(w.since), w.rounds, rows-countGone(w), rows, indexTTL)
		}
		w.round()
		select {
		case st = <-fetched:
			fetchedAt = time.Since(w.since)
		default:
		}
	}
	t.Logf("provider frozen (client_ttl %v): lookups answered Present for %v (%d Present answers in %d rounds, one each %v at most); the first lookup not Present came %v after the freeze, the last name's %v after",
		indexTTL, w.first, w.present, w.rounds, frozenRoundEvery, w.first, w.last())
	t.Logf("a get of %s made as the provider froze ended %v after %v, access %v", names[0], st.Rows, fetchedAt, st.Access)
	switch st.Rows[0] {
	case contract.Fault:
	case contract.Ready:
		assert.Equal(t, pattern(1, slotBytes), fetch.mem.slot(0), "a Ready get reads the whole object")
	default:
		t.Errorf("the get of a name the index listed whole ended %v: it reads the object whole or ends Fault", st.Rows[0])
	}
	if st.Access != contract.Ended {
		clientsKept.Add(1)
		fetch.keep()
	}
	require.NoError(t, s.pool.Resume())
	resumed = true
}

// With replicas 2 over three providers and one of them killed
// (SIGKILL), the master keeps listing the dead provider's copies until
// its client_ttl runs out: a get reads the first complete copy listed
// and tries no other, so the names whose first copy lived there fault
// (-800) while every lookup answers Present, the index listing each
// object whole. Every get reads the whole object or ends Fault. The
// window is measured and logged: from the kill to the first lookup
// that no longer answers Present, and to the first round in which
// every get read its object whole again.
func TestRealLookupAfterAProviderIsKilled(t *testing.T) {
	s := startRealStore(t, func(o *pool.Options) { o.Providers, o.ClientTTL = 3, indexTTL })
	setReplicas(t, s, 2)
	const rows, slotBytes = 24, 64 << 10
	r := openRealRig(t, s, rows, slotBytes, "kvshare-realpool/lookup-killed")
	names := replicaRows(r, "killed", rows)
	require.Equal(t, statuses(contract.Ready, rows), r.put(names, span(0, rows)...).Rows)
	raw := openRawClient(t, s)
	sizer, ok := raw.c.(mooncakesdk.Sizer)
	require.True(t, ok, "the purego client answers get_size")
	w := newIndexWatch(t, r, sizer, names, slotBytes)
	require.Equal(t, everyName(contract.Present, rows), w.round().got, "the pool healthy: every name Present")
	faulted := func() (n int) { // a raw get of every name: how many ended -800
		for i, name := range names {
			data, code, err := raw.get(r.key(name), slotBytes)
			require.NoError(t, err)
			switch {
			case code == mooncakesdk.TransferFail:
				n++
			case code == slotBytes:
				assert.True(t, bytes.Equal(pattern(byte(i+1), slotBytes), data), "%v after the kill: a get of %s read another object", time.Since(w.since), name)
			case code == mooncakesdk.ObjectNotFound && w.gone[i] >= 0:
			default:
				t.Errorf("%v after the kill: a get of %s, which the index listed, answered %v: it reads the object whole or ends Fault", time.Since(w.since), name, code)
			}
		}
		return n
	}
	require.Zero(t, faulted(), "the pool healthy: every get reads its object")

	require.NoError(t, s.pool.KillProviderAt(0))
	w.start()
	ctx, cancel := indexBound(t, "the master dropping the killed provider's copies", nil)
	defer cancel()
	var faultedRows, faultedPresent int
	healed := time.Duration(-1)
	pace := time.NewTicker(killedRoundEvery)
	defer pace.Stop()
	for healed < 0 && !w.allGone() {
		<-pace.C
		if ctx.Err() != nil {
			t.Fatalf("after %v (%d rounds) gets still faulted and %d of %d names read Present: the master's client_ttl is %v", time.Since(w.since), w.rounds, rows-countGone(w), rows, indexTTL)
		}
		rd := w.round()
		n := faulted()
		for _, x := range rd.got {
			if x == contract.Present && n > 0 {
				faultedPresent++
				break
			}
		}
		switch {
		case n > 0:
			faultedRows = max(faultedRows, n)
		case faultedRows > 0:
			healed = time.Since(w.since)
		}
	}
	first := "never, within the rounds (every object keeps a copy on a provider left)"
	if w.first >= 0 {
		first = fmt.Sprintf("%v after the kill", w.first)
	}
	t.Logf("one of three providers killed, replicas 2 (client_ttl %v): %d Present answers in %d rounds (one each %v at most); the first lookup not Present: %s; %d of %d names faulted (-800) while Present, until %v after the kill, when every get read its object whole again",
		indexTTL, w.present, w.rounds, killedRoundEvery, first, faultedRows, rows, healed)
	assert.Positive(t, faultedRows, "some names' first copy lived on the killed provider: their gets faulted while the index listed them")
}

// settleUntil waits for op's access to leave Open, with no bound of its
// own: the caller's loop is bounded, and gives up on the test first.
func settleUntil(op contract.Operation, changed <-chan struct{}) contract.OpState {
	for {
		if st := op.Poll(nil); st.Access != contract.Open {
			return st
		}
		<-changed
	}
}

// everyName is n answers of p.
func everyName(p contract.Presence, n int) []contract.Presence {
	out := make([]contract.Presence, n)
	for i := range out {
		out[i] = p
	}
	return out
}

func countGone(w *indexWatch) int {
	n := 0
	for _, g := range w.gone {
		if g >= 0 {
			n++
		}
	}
	return n
}
