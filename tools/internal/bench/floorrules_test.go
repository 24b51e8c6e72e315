package bench

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/patience"
	"github.com/kvshare/kvshare/tools/internal/poolfloor"
)

// callLog is a mooncakesdk.Client for the floor's three data calls
// alone: it answers every row Ready at once (puts after putDelay), logs
// each call as "get 103", "put 200" or "exists 200" (the buffer address
// of the call's first row names its part), and counts the put parts in
// flight, from the put's start to the end of its exists-check.
type callLog struct {
	mooncakesdk.Client // nil: any other call panics
	putDelay           time.Duration
	// together, when above 0, holds each put (for at most a patience
	// bound) until that many put parts are in flight at once; allIn
	// closes then.
	together int
	allIn    chan struct{}
	once     sync.Once

	mu    sync.Mutex
	calls []string
	addr  map[string]uintptr // a put's first key: its first buffer address

	putsNow, mostPuts atomic.Int32
}

func (c *callLog) note(call string, addr uintptr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, fmt.Sprintf("%s %d", call, addr))
}

func (c *callLog) log() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

func (c *callLog) BatchGetIntoList(_ *mooncakesdk.KeyList, bufs []uintptr, sizes []uint64, results []int64) error {
	c.note("get", bufs[0])
	for i := range results {
		results[i] = int64(sizes[i])
	}
	return nil
}

func (c *callLog) BatchPutFromList(keys *mooncakesdk.KeyList, bufs []uintptr, _ []uint64, results []int64) error {
	now := c.putsNow.Add(1)
	for {
		most := c.mostPuts.Load()
		if now <= most || c.mostPuts.CompareAndSwap(most, now) {
			break
		}
	}
	c.mu.Lock()
	if c.addr == nil {
		c.addr = map[string]uintptr{}
	}
	c.addr[string(keys.Key(0))] = bufs[0]
	c.mu.Unlock()
	c.note("put", bufs[0])
	if c.together > 0 {
		if int(now) >= c.together {
			c.once.Do(func() { close(c.allIn) })
		}
		patience.Bound{Span: patience.Wait(), What: "put parts in flight together"}.Wait(c.allIn)
	}
	time.Sleep(c.putDelay)
	clear(results)
	return nil
}

func (c *callLog) BatchIsExistList(keys *mooncakesdk.KeyList, results []int32) error {
	c.mu.Lock()
	addr := c.addr[string(keys.Key(0))]
	c.mu.Unlock()
	c.note("exists", addr)
	for i := range results {
		results[i] = 1
	}
	c.putsNow.Add(-1)
	return nil
}

// floorTestSubmission is a submission of rows parts of one row each,
// its rows' buffers at first, first+1, … (never touched: callLog copies
// nothing).
func floorTestSubmission(t *testing.T, dir contract.Direction, kind byte, rows int, first uintptr) *poolfloor.Submission {
	t.Helper()
	stem, err := keys.NewStem("bench/test")
	require.NoError(t, err)
	addrs := make([]uintptr, rows)
	for i := range addrs {
		addrs[i] = first + uintptr(i)
	}
	return poolfloor.Prepare(dir, stem, rowNames(kind, rows), addrs, 64, 0, 1, 1<<20)
}

// waitSubmissions fails the test unless every submission is done within
// the test's patience bound.
func waitSubmissions(t *testing.T, subs ...*poolfloor.Submission) {
	t.Helper()
	ctx, cancel := patience.For(t).Context(t.Context())
	defer cancel()
	for i, s := range subs {
		select {
		case <-s.Done():
			assert.Equal(t, s.Rows(), s.Ready(), "submission %d: every row Ready", i)
		case <-ctx.Done():
			require.FailNow(t, "the floor did not finish its parts within the bound", "submission %d", i)
		}
	}
}

// With one worker the rule-following floor takes parts exactly in the
// driver's order: a queued put goes after four gets have passed it, and
// a put part is its put and then its exists-check.
func TestRuleFloorLetsAPutInAfterFourGets(t *testing.T) {
	calls := &callLog{}
	f, err := newRuleFloor(calls, 1)
	require.NoError(t, err)
	defer func() { require.NoError(t, f.stop()) }()

	puts := floorTestSubmission(t, contract.PutDir, 'p', 2, 200)
	gets := floorTestSubmission(t, contract.GetDir, 'g', 8, 100)
	resume := f.pool.Pause() // queue everything before a worker takes a part
	require.NoError(t, f.submit(puts))
	require.NoError(t, f.submit(gets))
	resume()
	waitSubmissions(t, puts, gets)

	assert.Equal(t, []string{
		"get 100", "get 101", "get 102", "get 103", "put 200", "exists 200",
		"get 104", "get 105", "get 106", "get 107", "put 201", "exists 201",
	}, calls.log())
}

// Puts run on at most max(1, workers−1) workers at once, however many
// put parts wait; with two workers a put never runs beside another put.
func TestRuleFloorKeepsAWorkerFromPuts(t *testing.T) {
	for _, tc := range []struct{ workers, mostPuts int }{{1, 1}, {2, 1}, {4, 3}} {
		t.Run(fmt.Sprintf("%d workers", tc.workers), func(t *testing.T) {
			calls := &callLog{putDelay: 200 * time.Microsecond}
			f, err := newRuleFloor(calls, tc.workers)
			require.NoError(t, err)
			defer func() { require.NoError(t, f.stop()) }()

			subs := []*poolfloor.Submission{
				floorTestSubmission(t, contract.PutDir, 'p', 8, 200),
				floorTestSubmission(t, contract.GetDir, 'g', 8, 100),
				floorTestSubmission(t, contract.PutDir, 'q', 8, 300),
			}
			for _, s := range subs {
				require.NoError(t, f.submit(s))
			}
			waitSubmissions(t, subs...)
			assert.LessOrEqual(t, int(calls.mostPuts.Load()), tc.mostPuts, "put parts in flight at once")
			assert.Len(t, calls.log(), 8+2*8*2, "one call a get part, two a put part")
		})
	}
}

// The contrast that makes the rule floor a floor of its own: the
// unconstrained floor, given put parts alone, runs one on every
// goroutine.
func TestUnconstrainedFloorRunsPutsOnEveryGoroutine(t *testing.T) {
	calls := &callLog{together: 2, allIn: make(chan struct{})}
	f := poolfloor.Start(calls, 2)
	defer f.Stop()
	puts := floorTestSubmission(t, contract.PutDir, 'p', 2, 200)
	f.Submit(puts)
	waitSubmissions(t, puts)
	assert.EqualValues(t, 2, calls.mostPuts.Load(), "both put parts in flight at once")
}

func TestRuleFloorRefusesSubmissionsOnceStopped(t *testing.T) {
	f, err := newRuleFloor(&callLog{}, 2)
	require.NoError(t, err)
	require.NoError(t, f.stop())
	err = f.submit(floorTestSubmission(t, contract.GetDir, 'g', 1, 100))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stopped")
}

func TestRuleFloorRefusesNoWorkers(t *testing.T) {
	_, err := newRuleFloor(&callLog{}, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "workers is 0")
}
