package mooncakedrv

import (
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

// statusTimeout is realStatusTimeout (MC_TCP_STATUS_TIMEOUT_SEC), and
// rpcTimeout realRPCTimeout (MC_RPC_TIMEOUT_MS).
const (
	statusTimeout = 3 * time.Second
	rpcTimeout    = 3 * time.Second
)

// faultTTL is the master's client_ttl in the pools whose provider dies
// or goes silent: how long the master keeps a silent provider's segment.
const faultTTL = 2 * time.Second

// faultCases are the matrix's faults, in its order.
func faultCases() []faultCase {
	shortTTL := func(o *pool.Options) { o.ClientTTL = faultTTL }
	return []faultCase{{
		slug:   "master-killed",
		name:   "master killed (SIGKILL) mid-put and mid-get, then restarted",
		midPut: true, midGet: true,
		strike: func(t *testing.T, r *faultRun) { require.NoError(t, r.s.pool.KillMaster()) },
		recover: func(t *testing.T, r *faultRun) string {
			require.NoError(t, r.s.pool.StartMaster(t.Context()))
			return "master restarted on its ports, empty; " + r.waitServing(t)
		},
		expect:     answered(mooncakesdk.RPCFail),
		seedsAfter: contract.Miss,
	}, {
		slug:   "master-frozen",
		name:   "master frozen (SIGSTOP) past the client's RPC timeout (3 s), then resumed",
		midPut: true, midGet: true,
		strike: func(t *testing.T, r *faultRun) { require.NoError(t, r.s.pool.FreezeMaster()) },
		recover: func(t *testing.T, r *faultRun) string {
			time.Sleep(time.Until(r.strikeAt.Add(rpcTimeout + patience.Scaled(time.Second))))
			require.NoError(t, r.s.pool.ResumeMaster())
			return fmt.Sprintf("master resumed after %v", time.Since(r.strikeAt).Round(100*time.Millisecond))
		},
		expect:     answered(mooncakesdk.RPCTimeout),
		seedsAfter: contract.Ready,
	}, {
		slug:   "provider-killed",
		name:   "segment provider killed (SIGKILL) mid-fetch, restarted empty",
		tune:   shortTTL,
		midPut: true, midGet: true,
		strike: func(t *testing.T, r *faultRun) { require.NoError(t, r.s.pool.KillProvider()) },
		recover: func(t *testing.T, r *faultRun) string {
			r.waitSegmentDropped(t)
			require.NoError(t, r.s.pool.StartProvider(t.Context()))
			return "the master dropped the dead provider's segment (client_ttl 2 s); a new, empty provider started"
		},
		expect:     answered(mooncakesdk.TransferFail),
		seedsAfter: contract.Miss,
	}, {
		slug:     "replica-provider-killed",
		name:     "one of three providers killed (SIGKILL) mid-fetch, replicas 2; restarted empty",
		tune:     func(o *pool.Options) { o.Providers, o.ClientTTL, o.Isolate = 3, faultTTL, pool.IsolationAllowed() },
		replicas: 2,
		midPut:   true, midGet: true,
		strike: func(t *testing.T, r *faultRun) { require.NoError(t, r.s.pool.KillProviderAt(0)) },
		recover: func(t *testing.T, r *faultRun) string {
			// The seeds keep a copy on another provider, so waitSegmentDropped
			// cannot tell: wait out client_ttl with a margin (from patience:
			// the time the master takes to act on it).
			time.Sleep(time.Until(r.strikeAt.Add(faultTTL + patience.Scaled(2*time.Second))))
			require.NoError(t, r.s.pool.StartProviderAt(t.Context(), 0))
			return "past client_ttl (2 s) the master had dropped the dead provider's segment; a new, empty provider started in its place"
		},
		expect:     answered(mooncakesdk.TransferFail),
		seedsAfter: contract.Ready, // every seed kept its copy on another provider
	}, {
		slug:     "provider-cut",
		name:     "one of three providers cut off (link down) mid-put and mid-get, replicas 2, then its link up again",
		tune:     func(o *pool.Options) { o.Providers, o.Isolate = 3, true },
		replicas: 2,
		skip: func() string {
			if !pool.IsolationAllowed() {
				return "providers cannot be isolated here (" + pool.EnvIsolate + " unset), so none can be cut off"
			}
			return ""
		},
		midPut: true, midGet: true,
		// Cut off for two status-frame timeouts, then brought back while
		// the calls that did not give up yet still wait: the connects to
		// the cut node fail one SYN retry at a time (the tier's namespace
		// allows one), so some calls end -800 and the rest go on once the
		// link is up.
		strike: func(t *testing.T, r *faultRun) {
			require.NoError(t, r.s.pool.CutProvider(0))
			time.Sleep(time.Until(r.strikeAt.Add(2 * statusTimeout)))
			require.NoError(t, r.s.pool.HealProvider(0))
		},
		recover: func(t *testing.T, r *faultRun) string {
			return fmt.Sprintf("none (its link came up again %v after the cut)", 2*statusTimeout)
		},
		expect:     felt,
		seedsAfter: contract.Ready,
	}, {
		slug:   "master-killed-three-providers",
		name:   "master killed (SIGKILL) mid-put and mid-get with three providers mounted, then restarted",
		tune:   func(o *pool.Options) { o.Providers, o.Isolate = 3, pool.IsolationAllowed() },
		midPut: true, midGet: true,
		strike: func(t *testing.T, r *faultRun) { require.NoError(t, r.s.pool.KillMaster()) },
		recover: func(t *testing.T, r *faultRun) string {
			require.NoError(t, r.s.pool.StartMaster(t.Context()))
			return "master restarted on its ports, empty; " + r.waitServing(t)
		},
		expect:     answered(mooncakesdk.RPCFail),
		seedsAfter: contract.Miss,
	}, {
		slug:   "provider-frozen",
		name:   "segment provider frozen (SIGSTOP) past the master's client_ttl (2 s), then resumed",
		tune:   shortTTL,
		midPut: true, midGet: true,
		// Frozen until the master dropped its segment and the transfers
		// waiting on a status frame answered TRANSFER_FAIL; those
		// streaming a payload wait for the provider (or the store's 60 s
		// cap), so it is resumed then, and they end.
		strike: func(t *testing.T, r *faultRun) {
			frozen := time.Now()
			require.NoError(t, r.s.pool.Freeze())
			r.waitSegmentDropped(t)
			time.Sleep(time.Until(frozen.Add(statusTimeout + patience.Scaled(time.Second))))
			require.NoError(t, r.s.pool.Resume())
		},
		recover: func(t *testing.T, r *faultRun) string {
			return "none (the provider was resumed once its segment was dropped)"
		},
		expect:     felt,
		seedsAfter: contract.Miss,
	}, {
		slug: "client-exits",
		name: "a client process exits while its calls are blocked inside the SDK",
		run:  runExitingClient,
	}, {
		slug: "client-cut",
		name: "a client node (a network namespace of its own) cut off (link down) mid-put and mid-get, then its link up again; three providers, replicas 2",
		skip: func() string {
			if !pool.IsolationAllowed() {
				return "no namespace can be made here (" + pool.EnvIsolate + " unset), so no client node can be cut off"
			}
			return ""
		},
		run: runClientCut,
	}, {
		slug: "pool-full",
		name: "the pool fills up during a publish (eviction off)",
		// Room for the seeded rows and a few dozen more.
		tune:       func(o *pool.Options) { o.SegmentSize = 2*faultRows*faultSlotBytes + 32<<20 },
		recover:    func(t *testing.T, r *faultRun) string { return r.removePublished(t) },
		expect:     answered(mooncakesdk.NoAvailableHandle),
		seedsAfter: contract.Ready,
	}}
}

// waitSegmentDropped waits (bounded) until the master no longer knows a
// seeded object: it dropped the provider's segment. batch_is_exist asks
// the master alone, so it answers while the provider is dead or frozen.
func (r *faultRun) waitSegmentDropped(t *testing.T) {
	t.Helper()
	key := r.lenders[0].key(r.seeds[0])
	ok := waitCalls(t, func() bool {
		e, err := r.raw.exists(key)
		require.NoError(t, err)
		if e == 1 {
			time.Sleep(100 * time.Millisecond)
		}
		return e != 1
	})
	require.True(t, ok, "the master still knows %q a bound (%v) after the provider went away", key, realWait)
}

// removePublished removes (forced: the exists-checks granted read
// leases) every row the lenders' publishes stored, as an operator
// freeing a full pool would.
func (r *faultRun) removePublished(t *testing.T) string {
	rm, ok := r.raw.c.(mooncakesdk.Remover)
	require.True(t, ok, "the real client removes objects")
	n := 0
	for i, l := range r.lenders {
		o, _ := r.attempts[i][contract.PutDir].Outcome()
		for j, name := range r.names[i][contract.PutDir] {
			if o.Delivered[j] {
				require.NoError(t, rm.Remove(l.key(name), true))
				n++
			}
		}
	}
	return fmt.Sprintf("the %d published rows removed (forced)", n)
}

// answered checks that the store answered code for some key: the fault
// was felt.
func answered(code mooncakesdk.Code) func(t *testing.T, r *faultRun) {
	return func(t *testing.T, r *faultRun) {
		n := 0
		for _, g := range r.ob.answers.groups {
			n += r.ob.answers.count(g, code.String())
		}
		assert.Positive(t, n, "the store never answered %v: the fault was not felt (%s)", code, r.ob.answers.String())
	}
}

// felt checks that some row of the traffic ended neither Ready nor
// Cancelled: the fault was felt.
func felt(t *testing.T, r *faultRun) {
	n := 0
	for _, g := range r.ob.verdicts.groups {
		for _, name := range r.ob.verdicts.names[g] {
			if name != contract.Ready.String() && name != contract.Cancelled.String() {
				n += r.ob.verdicts.count(g, name)
			}
		}
	}
	assert.Positive(t, n, "every row was delivered or cancelled: the fault was not felt (%s)", r.ob.verdicts.String())
}

// waitServing waits (bounded) until the pool serves a client that never
// talked to it before, and says how long that took and what the probes
// saw. After a master restart the provider mounts its segment at the new
// master and then publishes its transfer-engine metadata again (the
// master's HTTP metadata server, in the same process, restarted empty):
// until the mount a put answers NO_AVAILABLE_HANDLE; between the two, a
// new client finds no metadata for the segment the master placed its
// object on, and the put answers TRANSFER_FAIL. Each probe is a raw
// client's put of a small object and its exists-check; a probe client
// that saw TRANSFER_FAIL is kept (its buffer may still be read) and the
// next probe opens another, as a client that cached nothing.
func (r *faultRun) waitServing(t *testing.T) string {
	t.Helper()
	start := time.Now()
	serving, cancel := bound(t, realWait, "the pool serving a new client").Context(context.Background())
	defer cancel()
	var seen tally
	probe := openRawClient(t, r.s)
	for n := 1; ; n++ {
		key := fmt.Sprintf("%s/probe-%d", r.prefix, n)
		code, err := probe.put(key, make([]byte, 4<<10))
		require.NoError(t, err)
		seen.add("probe put", codeName(int64(code)), 1)
		if code == mooncakesdk.OK {
			e, err := probe.exists(key)
			require.NoError(t, err)
			if e == 1 {
				break
			}
		}
		require.NoError(t, serving.Err(), "the pool did not serve a new client within its bound (%v, extended only while the process was starved): %s", realWait, seen.String())
		if code == mooncakesdk.TransferFail {
			probe = openRawClient(t, r.s)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Sprintf("a new client stored an object %v later (%s)", time.Since(start).Round(100*time.Millisecond), seen.String())
}
