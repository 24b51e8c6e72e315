package patience

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeStarvation makes the bounds of the test read starvation from the
// returned counter instead of the kernel, and forgets the shared reading.
func fakeStarvation(t *testing.T) *atomic.Int64 {
	var c atomic.Int64
	old := readStarvation
	readStarvation = func() time.Duration { return time.Duration(c.Load()) }
	reading.mu.Lock()
	reading.at = time.Time{}
	reading.mu.Unlock()
	t.Cleanup(func() {
		readStarvation = old
		reading.mu.Lock()
		reading.at = time.Time{}
		reading.mu.Unlock()
	})
	return &c
}

// lines collects what a Bound logs.
type lines struct {
	mu  sync.Mutex
	got []string
}

func (l *lines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, fmt.Sprintf(format, args...))
}

func (l *lines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

const span = 3 * time.Second

func TestBoundEndsAfterOneSpanWhenNothingEarnsMore(t *testing.T) {
	fakeStarvation(t)
	synctest.Test(t, func(t *testing.T) {
		var log lines
		start := time.Now()
		ctx, cancel := Bound{Span: span, What: "a hung call", Logf: log.logf}.Context(context.Background())
		defer cancel()
		<-ctx.Done()
		assert.Equal(t, span, time.Since(start))
		assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
		assert.Empty(t, log.all(), "nothing earned an extension")
	})
}

func TestBoundExtendedWhileStarved(t *testing.T) {
	tests := map[string]struct {
		perSpan    time.Duration // starvation added during each span
		wantSpans  int
		wantLogged int
	}{
		"starved over every span: every extension, then the end": {perSpan: span/StarvedShare + time.Millisecond, wantSpans: 1 + MaxExtensions, wantLogged: MaxExtensions},
		"starved exactly the share: not starved":                 {perSpan: span / StarvedShare, wantSpans: 1},
		"starved a little: not starved":                          {perSpan: 10 * time.Millisecond, wantSpans: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			starved := fakeStarvation(t)
			synctest.Test(t, func(t *testing.T) {
				var log lines
				start := time.Now()
				ctx, cancel := Bound{Span: span, What: "a slow drain", Logf: log.logf}.Context(context.Background())
				defer cancel()
				go func() { // once inside every span, never at its end
					time.Sleep(span / 4)
					for {
						starved.Add(int64(tc.perSpan))
						select {
						case <-ctx.Done():
							return
						case <-time.After(span):
						}
					}
				}()
				<-ctx.Done()
				assert.Equal(t, time.Duration(tc.wantSpans)*span, time.Since(start))
				assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
				got := log.all()
				require.Len(t, got, tc.wantLogged)
				for i, l := range got {
					assert.Contains(t, l, "a slow drain")
					assert.Contains(t, l, fmt.Sprintf("(%d of %d)", i+1, MaxExtensions))
					assert.Contains(t, l, "for a CPU")
				}
			})
		})
	}
}

func TestBoundExtendedWhileWhatItWaitsForMoves(t *testing.T) {
	fakeStarvation(t)
	synctest.Test(t, func(t *testing.T) {
		var log lines
		var progress, seen atomic.Int64
		moved := func() bool {
			p := progress.Load()
			return seen.Swap(p) != p
		}
		progress.Add(1) // before the bound: not counted
		start := time.Now()
		ctx, cancel := Bound{Span: span, Moved: moved, Logf: log.logf}.Context(context.Background())
		defer cancel()
		time.Sleep(span / 2)
		progress.Add(1) // moves during the first span only
		<-ctx.Done()
		assert.Equal(t, 2*span, time.Since(start))
		got := log.all()
		require.Len(t, got, 1)
		assert.Contains(t, got[0], "what it waits for moved")
	})
}

func TestBoundEndsWithItsParentAndItsCancel(t *testing.T) {
	fakeStarvation(t)
	synctest.Test(t, func(t *testing.T) {
		parent, stop := context.WithCancelCause(context.Background())
		ctx, cancel := Bound{Span: span}.Context(parent)
		defer cancel()
		stop(nil)
		<-ctx.Done()
		assert.ErrorIs(t, ctx.Err(), context.Canceled)

		var log lines
		starved := fakeStarvation(t)
		ctx, cancel = Bound{Span: span, Logf: log.logf}.Context(context.Background())
		cancel()
		assert.ErrorIs(t, ctx.Err(), context.Canceled)
		starved.Add(int64(span)) // would earn an extension, but the bound is over
		time.Sleep(2 * span)
		assert.Empty(t, log.all(), "nothing is logged once cancel returned")
		cancel() // a second cancel is harmless
	})
}

func TestBoundKeepsItsParentsValuesAndDeadline(t *testing.T) {
	fakeStarvation(t)
	type key struct{}
	parent, stop := context.WithTimeout(context.WithValue(context.Background(), key{}, "v"), time.Hour)
	defer stop()
	ctx, cancel := Bound{Span: 2 * time.Hour}.Context(parent)
	defer cancel()
	assert.Equal(t, "v", ctx.Value(key{}))
	want, _ := parent.Deadline()
	got, ok := ctx.Deadline()
	assert.True(t, ok)
	assert.Equal(t, want, got, "the parent's deadline, earlier than the bound's latest end")
	assert.NoError(t, ctx.Err())
}

// The deadline is the latest the bound can end: every extension taken.
func TestBoundDeadlineIsItsLatestEnd(t *testing.T) {
	starved := fakeStarvation(t)
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		ctx, cancel := Bound{Span: span}.Context(context.Background())
		defer cancel()
		d, ok := ctx.Deadline()
		require.True(t, ok)
		assert.Equal(t, start.Add((1+MaxExtensions)*span), d)
		go func() { // starved inside every span, never at its end: every extension
			time.Sleep(span / 4)
			for {
				starved.Add(int64(span))
				select {
				case <-ctx.Done():
					return
				case <-time.After(span):
				}
			}
		}()
		<-ctx.Done()
		assert.Equal(t, d, time.Now(), "a bound extended every time ends at its deadline")
		again, _ := ctx.Deadline()
		assert.Equal(t, d, again, "the deadline never moves")
	})
}

func TestBoundWait(t *testing.T) {
	fakeStarvation(t)
	synctest.Test(t, func(t *testing.T) {
		done := make(chan struct{})
		time.AfterFunc(span/2, func() { close(done) })
		assert.True(t, Bound{Span: span}.Wait(done))
		assert.False(t, Bound{Span: span}.Wait(make(chan struct{})))
	})
}

// TestStarvationMeasuresThisProcess runs more busy threads than the
// machine has CPUs and requires the reading to grow: the kernel kept
// some of them waiting. (Go keeps the threads it made, idle, so their
// share stays in the sum.)
func TestStarvationMeasuresThisProcess(t *testing.T) {
	before, src := Starvation()
	if src != RunDelay {
		t.Skipf("this host gives no per-thread run-queue delay; starvation is read from %v", src)
	}
	threads := 4 * numCPU()
	var wg sync.WaitGroup
	stopAt := time.Now().Add(300 * time.Millisecond)
	prev := setMaxProcs(threads)
	defer setMaxProcs(prev)
	for range threads {
		wg.Go(func() {
			for time.Now().Before(stopAt) {
			}
		})
	}
	wg.Wait()
	after, _ := Starvation()
	assert.Greater(t, after, before, "%d threads busy on %d CPUs, and no run-queue delay counted", threads, numCPU())
}
