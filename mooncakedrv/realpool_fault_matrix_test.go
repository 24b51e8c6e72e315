package mooncakedrv

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/mooncakedrv/pool/pooltest"
)

// faultRows is how many rows each lender publishes and fetches while a
// fault strikes (and seeds before): eight calls of faultCallRows each
// way, 64 MiB.
const faultRows = 64

// matrixOutEnv names the file the fault matrix writes its table to (see
// writeMatrix); unset, it writes nothing.
const matrixOutEnv = "KVSHARE_FAULT_MATRIX_OUT"

// matrixRow is one fault's row of the matrix.
type matrixRow struct {
	fault, answers, verdicts, access, held, written, recovered string
	failed                                                     bool
}

// The fault matrix: for each fault, a pool of its own, two backends with
// publish and fetch traffic in flight when it strikes, and then, against
// the verdict table (docs/design/mooncakedrv.md): every row's
// verdict as the store's answers for its key say, every operation's
// access Unprovable exactly where an answer leaves a transfer that may
// still run, the driver's and the backend's stats counting exactly those
// calls' rows as lent, what Shutdown reports as held (nothing, or those
// attempts and the region, with the hold kept), no byte of a slot
// written after its operation's access ended (fences), and, after the
// pool is brought back, a new backend over a new client that round-trips
// rows. Each subtest checks every cell against the rule; the table is
// written where KVSHARE_FAULT_MATRIX_OUT says (the module's README.md:
// see writeMatrix).
func TestRealFaultMatrix(t *testing.T) {
	pooltest.Dir(t)
	var rows []matrixRow
	for _, fc := range faultCases() {
		t.Run(fc.slug, func(t *testing.T) {
			start := time.Now()
			row := matrixRow{fault: fc.name, failed: true}
			defer func() {
				row.failed = t.Failed()
				rows = append(rows, row)
				t.Logf("%s: %v", fc.name, time.Since(start).Round(100*time.Millisecond))
			}()
			if fc.skip != nil {
				if why := fc.skip(); why != "" {
					row.failed, row.recovered = false, "skipped: "+why
					t.Skip(why)
				}
			}
			if fc.run != nil {
				fc.run(t, &row)
				return
			}
			runFault(t, fc, &row)
		})
	}
	if path := os.Getenv(matrixOutEnv); path != "" {
		require.NoError(t, writeMatrix(path, rows))
		t.Logf("fault matrix written to %s", path)
	}
}

// faultCase is one fault of the matrix.
type faultCase struct {
	slug, name string
	// tune changes the pool's options (pool.ForTests).
	tune func(*pool.Options)
	// replicas is the copies every put of the lenders asks for (0: one).
	replicas int
	// skip says why the fault cannot be brought about here ("" when it
	// can): the case is skipped, and the matrix says so.
	skip func() string
	// midPut and midGet: the fault strikes once a put call and a get
	// call are inside the SDK, and the matrix checks it did.
	midPut, midGet bool
	// strike brings the fault about while the traffic is in flight; nil:
	// the traffic is the fault.
	strike func(t *testing.T, r *faultRun)
	// recover brings the pool back once every operation settled, and
	// says how.
	recover func(t *testing.T, r *faultRun) string
	// seedsAfter is what a new backend's fetch of the rows seeded before
	// the fault must end with after recovery (Ready: whole, same bytes).
	seedsAfter contract.RowStatus
	// expect checks what this fault must show beyond the rule.
	expect func(t *testing.T, r *faultRun)
	// run replaces the common course (the exiting client).
	run func(t *testing.T, row *matrixRow)
}

// faultRun is one fault's pool, lenders and what they saw.
type faultRun struct {
	s        *realStore
	raw      *rawClient
	prefix   string
	lenders  []*faultLender
	attempts []map[contract.Direction]contract.Attempt // by lender
	names    []map[contract.Direction][]string         // by lender
	seeds    []string                                  // every lender's seeded rows
	orphans  []string                                  // rows a client that died was putting
	strikeAt time.Time
	ob       observation
	kept     []kept // by lender
}

// runFault is the common course of a fault: seed, traffic, strike,
// settle, observe, recover, a new backend, shutdown, fences.
func runFault(t *testing.T, fc faultCase, row *matrixRow) {
	r := &faultRun{s: startRealStore(t, fc.tune), prefix: "kvshare-realpool/fault/" + fc.slug}
	if fc.replicas > 1 {
		r.s.setReplicas(t, fc.replicas)
	}
	r.raw = openRawClient(t, r.s)
	for _, name := range []string{"A", "B"} {
		r.lenders = append(r.lenders, openFaultLender(t, r.s, name, 2*faultRows, r.prefix))
	}
	phase := phases(t)
	r.seed(t)
	phase("seeded")
	r.startTraffic(t)
	if fc.strike != nil {
		r.waitInside(t, fc.midPut, fc.midGet)
		r.strikeAt = time.Now()
		fc.strike(t, r)
		// As an engine would: what was not handed to the store yet ends
		// Cancelled, so only the calls inside the SDK meet the fault.
		for _, as := range r.attempts {
			for _, a := range as {
				a.Cancel()
			}
		}
	}
	phase("struck")
	r.settle(t, fc)
	phase("settled")
	for _, l := range r.lenders {
		r.kept = append(r.kept, l.observe(&r.ob))
	}
	for i, l := range r.lenders {
		for d, a := range r.attempts[i] {
			l.delivered(a, r.names[i][d])
		}
	}
	row.answers, row.verdicts = r.ob.answers.String(), r.ob.verdicts.String()
	row.access = r.ob.access.String()
	if fc.expect != nil {
		fc.expect(t, r)
	}
	how := fc.recover(t, r)
	phase("recovered")
	row.recovered = how + "; " + r.newBackend(t, fc.seedsAfter)
	phase("new backend round trip")
	var held []string
	for i, l := range r.lenders {
		h := l.shutdown()
		l.checkHeld(h, r.kept[i], r.attempts[i])
		held = append(held, heldCell(l.name, h, int(l.be.Stats().RowsLent)))
	}
	row.held = strings.Join(held, "; ")
	row.written = fenceCell(t, r.lenders...)
	phase("shut down")
}

// setReplicas has every client of s opened from now on ask for n copies
// of each put.
func (s *realStore) setReplicas(t *testing.T, n int) {
	t.Helper()
	cfg, err := os.ReadFile(s.config)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(s.config, fmt.Appendf(cfg, "replicas = %d\n", n), 0o644))
}

// phases returns a function that logs how long each phase of a fault
// took.
func phases(t *testing.T) func(string) {
	last := time.Now()
	return func(what string) {
		t.Logf("fault matrix: %s after %v", what, time.Since(last).Round(10*time.Millisecond))
		last = time.Now()
	}
}
