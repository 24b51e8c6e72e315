package mooncakedrv

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// newBackend opens a new lender (a new client and driver) over the
// recovered pool, fetches the rows seeded before the fault (each must
// end seedsAfter), and round-trips fresh rows, trying again (bounded,
// fresh rows each time) until every row is delivered both ways. It
// returns the matrix's account of it.
func (r *faultRun) newBackend(t *testing.T, seedsAfter contract.RowStatus) string {
	t.Helper()
	// A few of each lender's seeded rows.
	var seeds []string
	for i := 0; i < len(r.seeds); i += faultRows {
		seeds = append(seeds, r.seeds[i:i+faultCallRows]...)
	}
	c := openFaultLender(t, r.s, "C", max(len(seeds), len(r.orphans), 2*faultCallRows), r.prefix)
	seen := c.fetchAll(seeds)
	assert.Equal(t, len(seeds), seen.count("fetch", seedsAfter.String()),
		"a new backend's fetch of the rows seeded before the fault: want every row %v, got %v", seedsAfter, seen.String())
	account := "seeded rows fetched: " + seen.String()
	if len(r.orphans) > 0 {
		seen := c.fetchAll(r.orphans)
		assert.Zero(t, seen.count("fetch", contract.Ready.String()), "a row a dead client was putting read back Ready")
		account += "; the dead clients' rows fetched: " + seen.String()
	}

	start := time.Now()
	recovering, cancel := bound(t, realWait, "a new backend round-tripping rows").Context(context.Background())
	defer cancel()
	var failed []string
	for try := 1; ; try++ {
		ok, what := c.roundTrip(rowNames(fmt.Sprintf("recovered-%d", try), faultCallRows))
		var rt observation
		c.observe(&rt) // each try: a later one writes the same slots
		c.client.forget()
		c.drv.forget()
		if ok {
			account += "; new backend: " + what
			if len(failed) > 0 {
				tries := "try 1"
				if try > 2 {
					tries = fmt.Sprintf("tries 1–%d", try-1)
				}
				account += fmt.Sprintf(" at try %d, %v after recovery (%s: %s)", try, time.Since(start).Round(100*time.Millisecond), tries, strings.Join(slices.Compact(failed), " / "))
			}
			break
		}
		failed = append(failed, rt.verdicts.String())
		t.Logf("new backend, try %d: %s (%s; the store answered %s)", try, what, rt.verdicts.String(), rt.answers.String())
		if rt.opsUnprovable > 0 {
			// A pool not quite back (a provider whose transfer metadata
			// the restarted master does not have yet answers -800 for
			// a transfer that never ran) leaves the try's slots held:
			// win them back before the next try writes them.
			got, err := c.be.Reclaim(t.Context())
			if err != nil {
				t.Errorf("the new backend's try %d left access unprovable (the store answered %s), and the reclaim failed: %v", try, rt.answers.String(), err)
				account += "; NOT RECOVERED: " + strings.Join(slices.Compact(failed), " / ")
				break
			}
			failed[len(failed)-1] += fmt.Sprintf(", access unprovable (%s), reclaimed in %v", rt.answers.String(), got.Took.Round(time.Millisecond))
		}
		if recovering.Err() != nil {
			t.Errorf("a new backend did not round-trip rows within its bound (%v, extended only while the process was starved): %s", realWait, strings.Join(slices.Compact(failed), " / "))
			account += "; NOT RECOVERED: " + strings.Join(slices.Compact(failed), " / ")
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	assert.Nil(t, c.shutdown(), "the new backend released everything")
	return account
}

// quiescedWithin waits (bounded) for a to quiesce.
func (l *faultLender) quiescedWithin(a contract.Attempt) {
	l.t.Helper()
	if !bound(l.t, realWait, "lender "+l.name+"'s quiescence").Wait(a.Done()) {
		l.t.Fatalf("lender %s: %v did not quiesce within its bound (%v)", l.name, a, realWait)
	}
}

// fetchAll fetches names into the first slots, waits for the attempt to
// quiesce, checks it as every operation is checked, and returns the
// verdicts; it forgets what it recorded.
func (l *faultLender) fetchAll(names []string) tally {
	l.t.Helper()
	a, err := l.be.Fetch(namedView(names, span(0, len(names))), nil)
	require.NoError(l.t, err)
	l.outcome(a)
	l.quiescedWithin(a)
	var seen observation
	l.observe(&seen)
	l.client.forget()
	l.drv.forget()
	return seen.verdicts
}
