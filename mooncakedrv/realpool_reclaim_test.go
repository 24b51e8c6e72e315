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
	"github.com/kvshare/kvshare/patience"
)

// reclaimWait bounds the wait for the -800 of a transfer the provider
// stopped mid-stream: the store's fixed 60 s cap (a scenario, not
// scaled), and a margin from patience.
var reclaimWait = 60*time.Second + patience.Scaled(30*time.Second)

// TestRealReclaimAfterAFrozenProvider proves on a real pool that a
// reclaim wins back, safely, the memory of calls a frozen provider left
// unprovable. A backend has a fetch and a publish of 8 rows of 16 MiB
// in flight when the only provider is frozen (SIGSTOP) while the fetch
// is half written: both stall, streaming, and answer -800 at the
// store's 60 s cap, their access Unprovable. Reclaim then destroys the
// client (every transfer thread joined, every socket closed) and opens a
// fresh one: every attempt quiesces and the memory is lent to nobody.
// Every slot is filled with a fence, the provider resumed, and some
// seconds later no byte of a fence has changed; the published objects
// read back whole or absent; a round trip works over the fresh client;
// and Close gives everything back.
func TestRealReclaimAfterAFrozenProvider(t *testing.T) {
	s := startRealStore(t, nil)
	const rows, slotBytes = 8, 16 << 20
	l := newRealLender(t, s, 3*rows, slotBytes, "kvshare-realpool/reclaim", false)
	stored, fetched, published := span(0, rows), span(rows, 2*rows), span(2*rows, 3*rows)
	for i, sl := range stored {
		l.mem.fill(sl, byte(1+i)) // no row's first byte is 0
	}
	a, err := l.be.Publish(view(0, stored...), nil)
	require.NoError(t, err)
	l.quiesced(a)
	require.Equal(t, rows, l.outcome(a).Prefix(), "the rows the fetch will read are stored")
	for i, sl := range published {
		l.mem.fill(sl, byte(100+i))
	}
	for _, sl := range fetched {
		clear(l.mem.slot(sl))
	}

	var fetch, pub contract.Attempt
	first := rows // the published rows' first name, fresh for each try
	traffic := func() <-chan struct{} {
		var err error
		fetch, err = l.be.Fetch(view(0, fetched...), nil)
		require.NoError(t, err)
		pub, err = l.be.Publish(view(first, published...), nil)
		require.NoError(t, err)
		done := make(chan struct{})
		go func(f, p contract.Attempt) {
			<-f.Known()
			<-p.Known()
			close(done)
		}(fetch, pub)
		return done
	}
	half := func() bool {
		head, tail := l.mem.slot(fetched[0]), l.mem.slot(fetched[rows-1])
		return head[0] != 0 && tail[len(tail)-1] == 0
	}
	reset := func() {
		l.quiesced(fetch)
		l.quiesced(pub)
		for _, sl := range fetched {
			clear(l.mem.slot(sl))
		}
		first += rows
	}
	freezeMidway(t, s, traffic, half, reset)
	frozen := time.Now()
	verdicts := map[string]contract.Outcome{}
	for name, at := range map[string]contract.Attempt{"fetch": fetch, "publish": pub} {
		if !bound(t, reclaimWait, name+"'s outcome").Wait(at.Known()) {
			t.Fatalf("%s: no outcome within its bound (%v) after the provider was frozen", name, reclaimWait)
		}
		verdicts[name], _ = at.Outcome()
	}
	answered := time.Since(frozen)
	before := l.be.Stats()
	require.Positive(t, before.CallsUnprovable, "the frozen provider left no call unprovable (answered after %v)", answered)
	assert.False(t, fetch.Quiesced() && pub.Quiesced(), "an attempt with an unprovable call quiesced")

	ctx, cancel := bound(t, reclaimWait, "the reclaim").Context(context.Background())
	defer cancel()
	got, err := l.be.Reclaim(ctx)
	require.NoError(t, err)
	assert.Equal(t, before.CallsUnprovable, got.Calls, "every unprovable call given back")
	assert.Equal(t, before.BytesLent, got.Bytes, "every lent byte given back")
	for _, at := range []contract.Attempt{fetch, pub} {
		if !bound(t, realWait, "quiescence after the reclaim").Wait(at.Done()) {
			t.Fatalf("%v did not quiesce after the reclaim", at)
		}
	}
	after := l.be.Stats()
	assert.Zero(t, after.RowsLent)
	assert.EqualValues(t, 1, after.Reclaims)
	ds := l.drv.Stats()
	assert.EqualValues(t, 1, ds.Recycles)
	assert.Zero(t, ds.OpsUnprovable)
	t.Logf("provider frozen mid-fetch: -800 after %v; %d calls (%d rows, %d MiB) unprovable; reclaim took %v; fetch rows %v, publish rows %v",
		answered.Round(time.Millisecond), got.Calls, got.Rows, got.Bytes>>20, got.Took.Round(time.Millisecond), verdicts["fetch"].Rows, verdicts["publish"].Rows)

	// The slots are the lender's again: fence them, let the provider
	// go on, and look for a while.
	fences := map[int][]byte{}
	for _, sl := range append(fetched, published...) {
		l.mem.fill(sl, byte(200+sl))
		fences[sl] = bytes.Clone(l.mem.slot(sl))
	}
	require.NoError(t, s.pool.Resume())
	time.Sleep(3 * statusTimeout)
	for sl, want := range fences {
		assert.True(t, bytes.Equal(want, l.mem.slot(sl)), "slot %d changed after the reclaim gave it back", sl)
	}

	// The published objects: whole or absent, read by a lender of its
	// own; then a round trip over the recycled driver.
	r := newRealLender(t, s, rows, slotBytes, "kvshare-realpool/reclaim", false)
	back, err := r.be.Fetch(view(first, span(0, rows)...), nil)
	require.NoError(t, err)
	r.quiesced(back)
	o := r.outcome(back)
	whole := 0
	for i := range rows {
		switch o.Rows[i] {
		case contract.Ready:
			whole++
			assert.Equal(t, pattern(byte(100+i), slotBytes), r.mem.slot(i), "published row %d read back with other bytes", i)
		case contract.Miss:
		default:
			t.Errorf("published row %d read back %v: neither whole nor absent", i, o.Rows[i])
		}
	}
	t.Logf("published rows read back after the reclaim: %d whole, %d absent", whole, rows-whole)
	roundTrip(t, l, span(0, 2), first+rows)
	ctx, cancel = bound(t, realWait, "the closing Close").Context(context.Background())
	defer cancel()
	require.NoError(t, l.be.Close(ctx), "everything given back")
}

// roundTrip publishes fresh rows from slots and fetches them back into
// the slots after them, over l's backend, byte for byte.
func roundTrip(t *testing.T, l *realLender, slots []int, first int) {
	t.Helper()
	for i, sl := range slots {
		l.mem.fill(sl, byte(50+i))
	}
	a, err := l.be.Publish(view(first, slots...), nil)
	require.NoError(t, err)
	l.quiesced(a)
	require.Equal(t, len(slots), l.outcome(a).Prefix(), "a publish over the fresh client")
	into := make([]int, len(slots))
	for i := range slots {
		into[i] = slots[len(slots)-1] + 1 + i
		clear(l.mem.slot(into[i]))
	}
	f, err := l.be.Fetch(view(first, into...), nil)
	require.NoError(t, err)
	l.quiesced(f)
	require.Equal(t, len(slots), l.outcome(f).Prefix(), "a fetch over the fresh client")
	for i := range slots {
		assert.Equal(t, pattern(byte(50+i), int(l.mem.region.SlotBytes)), l.mem.slot(into[i]), "row %s", fmt.Sprint(first+i))
	}
}
