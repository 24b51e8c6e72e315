package scheduler_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/scheduler"
)

func TestNewRefusesBadArguments(t *testing.T) {
	run := func(int) {}
	for _, tc := range []struct {
		name    string
		workers int
		run     func(int)
		want    string
	}{
		{"zero workers", 0, run, "workers is 0"},
		{"negative workers", -3, run, "workers is -3"},
		{"nil run", 1, nil, "run is nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool, err := scheduler.New(tc.workers, tc.run)
			require.ErrorIs(t, err, scheduler.ErrInvalid)
			assert.Contains(t, err.Error(), tc.want)
			assert.Nil(t, pool)
		})
	}
}

func TestSubmitRefusesAnUnknownKind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1)
		for _, tc := range []struct {
			kind scheduler.Kind
			want string
		}{
			{0, "kind Kind(0)"},
			{3, "kind Kind(3)"},
			{255, "kind Kind(255)"},
		} {
			err := f.pool.Submit(tc.kind, quick("odd"))
			require.ErrorIs(t, err, scheduler.ErrInvalid, "kind %d", tc.kind)
			assert.Contains(t, err.Error(), tc.want)
		}
		synctest.Wait()
		assert.Zero(t, f.pool.Queued())
		assert.Empty(t, f.rec.order())
	})
}

func TestKindString(t *testing.T) {
	assert.Equal(t, "get", scheduler.Get.String())
	assert.Equal(t, "put", scheduler.Put.String())
	assert.Equal(t, "Kind(7)", scheduler.Kind(7).String())
}

func TestWorkers(t *testing.T) {
	pool, err := scheduler.New(3, func(int) {})
	require.NoError(t, err)
	assert.Equal(t, 3, pool.Workers())
	require.True(t, pool.Stop(context.Background()))
}

func TestRunMaySubmit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ran []int
		var pool *scheduler.Pool[int]
		pool, err := scheduler.New(1, func(n int) {
			ran = append(ran, n)
			if n < 5 {
				// A get that queues the next step as a put.
				require.NoError(t, pool.Submit(scheduler.Put, n+1))
			}
		})
		require.NoError(t, err)
		require.NoError(t, pool.Submit(scheduler.Get, 1))
		synctest.Wait()
		assert.Equal(t, []int{1, 2, 3, 4, 5}, ran)
		assert.True(t, pool.Stop(context.Background()))
	})
}

// TestConcurrentUse submits, cancels and runs parts from many goroutines
// at once (meant for -race): every part either runs once or is returned
// by Cancel once, never both, and the worker and put limits hold
// throughout.
func TestConcurrentUse(t *testing.T) {
	for _, workers := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			const submitters, each = 8, 400
			type item struct {
				id   int
				kind scheduler.Kind
			}
			var (
				ran       [submitters * each]atomic.Int32
				cancelled [submitters * each]atomic.Int32
				settled   sync.WaitGroup // one count per part: ran or cancelled
				running   atomic.Int32
				putting   atomic.Int32
				overRun   atomic.Int32 // times a part saw too many running
				overPut   atomic.Int32 // times a put saw too many puts
			)
			limit := int32(max(1, workers-1))
			pool, err := scheduler.New(workers, func(it item) {
				if running.Add(1) > int32(workers) {
					overRun.Add(1)
				}
				if it.kind == scheduler.Put && putting.Add(1) > limit {
					overPut.Add(1)
				}
				ran[it.id].Add(1)
				if it.kind == scheduler.Put {
					putting.Add(-1)
				}
				running.Add(-1)
				settled.Done()
			})
			require.NoError(t, err)

			settled.Add(submitters * each)
			var submitting sync.WaitGroup
			for s := range submitters {
				submitting.Go(func() {
					for i := range each {
						id := s*each + i
						kind := scheduler.Get
						if id%3 == 0 {
							kind = scheduler.Put
						}
						if err := pool.Submit(kind, item{id: id, kind: kind}); err != nil {
							t.Errorf("submit %d: %v", id, err)
							settled.Done()
						}
					}
				})
			}
			stopCancelling := make(chan struct{})
			cancelling := make(chan struct{})
			go func() {
				defer close(cancelling)
				for {
					for _, it := range pool.Cancel(func(it item) bool { return it.id%7 == 0 }) {
						cancelled[it.id].Add(1)
						settled.Done()
					}
					select {
					case <-stopCancelling:
						return
					default:
					}
				}
			}()
			submitting.Wait()
			close(stopCancelling)
			<-cancelling
			settled.Wait()
			require.True(t, pool.Stop(context.Background()))

			for id := range ran {
				r, c := ran[id].Load(), cancelled[id].Load()
				if r+c != 1 {
					t.Errorf("part %d ran %d times and was cancelled %d times", id, r, c)
				}
				if c == 1 && id%7 != 0 {
					t.Errorf("part %d was cancelled without matching", id)
				}
			}
			assert.Zero(t, overRun.Load(), "parts running beyond the worker count")
			assert.Zero(t, overPut.Load(), "puts running beyond the put limit")
			assert.Zero(t, pool.Queued())
		})
	}
}

// TestPanicInRunEndsTheProgram runs this test binary again as a child
// whose run function panics: the panic is not swallowed (the child exits
// with the panic's message) and nothing waits forever.
func TestPanicInRunEndsTheProgram(t *testing.T) {
	if os.Getenv("SCHEDULER_PANIC_CHILD") == "1" {
		started := make(chan struct{})
		pool, err := scheduler.New(2, func(int) {
			close(started)
			panic("part exploded")
		})
		if err != nil {
			os.Exit(3)
		}
		_ = pool.Submit(scheduler.Get, 1)
		<-started
		// Stop waits for the panicking part. It returns only if the panic
		// were swallowed, and the child would then exit cleanly.
		pool.Stop(context.Background())
		os.Exit(0)
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestPanicInRunEndsTheProgram$")
	cmd.Env = append(os.Environ(), "SCHEDULER_PANIC_CHILD=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the child should fail; output:\n%s", out)
	assert.Equal(t, 2, exit.ExitCode(), "Go's exit code for an unrecovered panic")
	assert.Contains(t, string(out), "panic: part exploded")
}

// Pause keeps queued parts queued (Cancel still removes them) while
// parts already taken run on; resume lets the workers take them.
func TestPauseHoldsQueuedParts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ran []int
		var mu sync.Mutex
		release := make(chan struct{})
		pool, err := scheduler.New(2, func(p int) {
			if p == 0 {
				<-release
			}
			mu.Lock()
			ran = append(ran, p)
			mu.Unlock()
		})
		require.NoError(t, err)
		require.NoError(t, pool.Submit(scheduler.Get, 0))
		synctest.Wait()
		require.Equal(t, 1, pool.Running())

		resume := pool.Pause()
		inner := pool.Pause() // pauses nest
		for p := 1; p <= 3; p++ {
			require.NoError(t, pool.Submit(scheduler.Get, p))
		}
		close(release) // the part taken before the pause runs on
		synctest.Wait()
		assert.Equal(t, []int{0}, ran)
		assert.Equal(t, 3, pool.Queued())
		assert.Equal(t, []int{2}, pool.Cancel(func(p int) bool { return p == 2 }))

		resume()
		resume() // only the first call counts
		synctest.Wait()
		assert.Equal(t, 2, pool.Queued(), "one pause is still on")
		inner()
		synctest.Wait()
		assert.ElementsMatch(t, []int{0, 1, 3}, ran)
		assert.True(t, pool.Stop(context.Background()))
	})
}
