package mooncakedrv

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// seed has each lender publish faultRows rows the other fetches later,
// all Ready, then forgets what its client and driver recorded.
func (r *faultRun) seed(t *testing.T) {
	t.Helper()
	var as []contract.Attempt
	for _, l := range r.lenders {
		names := rowNames("seed-"+l.name, faultRows)
		r.seeds = append(r.seeds, names...)
		l.load(names, span(0, faultRows))
		a, err := l.be.Publish(namedView(names, span(0, faultRows)), nil)
		require.NoError(t, err)
		as = append(as, a)
	}
	for i, l := range r.lenders {
		o := l.outcome(as[i])
		require.NoError(t, o.Fault, "lender %s: seeding", l.name)
		require.Equal(t, faultRows, o.Prefix(), "lender %s: rows seeded", l.name)
		l.quiescedWithin(as[i])
		l.client.forget()
		l.drv.forget()
	}
}

// startTraffic has each lender publish faultRows fresh rows from its
// first slots and fetch the rows the other lender seeded into the next
// ones, all four attempts at once.
func (r *faultRun) startTraffic(t *testing.T) {
	t.Helper()
	for i, l := range r.lenders {
		other := r.lenders[(i+1)%len(r.lenders)]
		pub, got := rowNames("pub-"+l.name, faultRows), rowNames("seed-"+other.name, faultRows)
		l.load(pub, span(0, faultRows))
		for _, s := range span(faultRows, 2*faultRows) {
			clear(l.mem.slot(s))
		}
		r.names = append(r.names, map[contract.Direction][]string{contract.PutDir: pub, contract.GetDir: got})
		r.attempts = append(r.attempts, map[contract.Direction]contract.Attempt{})
	}
	for i, l := range r.lenders {
		a, err := l.be.Publish(namedView(r.names[i][contract.PutDir], span(0, faultRows)), nil)
		require.NoError(t, err)
		r.attempts[i][contract.PutDir] = a
		a, err = l.be.Fetch(namedView(r.names[i][contract.GetDir], span(faultRows, 2*faultRows)), nil)
		require.NoError(t, err)
		r.attempts[i][contract.GetDir] = a
	}
}

// waitInside waits (bounded) until the lenders have a put call (when
// put) and a get call (when get) inside the SDK at once, each after one
// of its kind returned: the traffic is flowing, past the master RPC that
// starts it.
func (r *faultRun) waitInside(t *testing.T, put, get bool) {
	t.Helper()
	ok := waitCalls(t, func() bool {
		var putsDone, puts, getsDone, gets int
		for _, l := range r.lenders {
			pd, p := l.client.calls(kindPut)
			gd, g := l.client.calls(kindGet)
			putsDone, puts, getsDone, gets = putsDone+pd, puts+p, getsDone+gd, gets+g
		}
		return (!put || puts > 0 && putsDone > 0) && (!get || gets > 0 && getsDone > 0)
	})
	require.True(t, ok, "the traffic never had a put (%v) and a get (%v) inside the SDK at once", put, get)
}

// settle waits (bounded) for every attempt's outcome and every
// operation's access to leave Open, then checks that the fault struck
// mid-call where the case says.
func (r *faultRun) settle(t *testing.T, fc faultCase) {
	t.Helper()
	for i, l := range r.lenders {
		for _, d := range []contract.Direction{contract.PutDir, contract.GetDir} {
			l.outcome(r.attempts[i][d])
		}
		l.settled()
	}
	for kind, want := range map[sdkKind]bool{kindPut: fc.midPut, kindGet: fc.midGet} {
		if !want {
			continue
		}
		n := 0
		for _, l := range r.lenders {
			n += l.client.straddles(kind, r.strikeAt)
		}
		assert.Positive(t, n, "the fault struck while no %s call was inside the SDK", kind)
	}
}
