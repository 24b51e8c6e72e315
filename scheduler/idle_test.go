package scheduler

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIdleWaitsForRunningParts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		ran := make(chan int, 4)
		p, err := New(2, func(n int) {
			if n == 1 {
				<-release
			}
			ran <- n
		})
		require.NoError(t, err)
		defer p.Stop(context.Background())

		assert.True(t, p.Idle(t.Context()), "an idle pool is idle at once")
		require.NoError(t, p.Submit(Get, 1))
		synctest.Wait()
		resume := p.Pause()
		require.NoError(t, p.Submit(Get, 2))

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		assert.False(t, p.Idle(ctx), "a part runs: not idle when the context ends")

		done := make(chan bool, 1)
		go func() { done <- p.Idle(t.Context()) }()
		synctest.Wait()
		close(release)
		assert.True(t, <-done, "idle once the running part returned")
		assert.Equal(t, 1, <-ran)
		assert.Equal(t, 1, p.Queued(), "the paused pool started nothing more")
		resume()
		assert.Equal(t, 2, <-ran)
	})
}
