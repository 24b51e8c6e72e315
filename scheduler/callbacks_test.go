package scheduler_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/scheduler"
)

func TestCallbacksWaitForThoseUnderWay(t *testing.T) {
	var c scheduler.Callbacks
	assert.True(t, c.Wait(t.Context()), "none started")

	release := make(chan struct{})
	ran := make(chan struct{}, 2)
	c.Go(func() { <-release; ran <- struct{}{} })
	c.Go(func() { <-release; ran <- struct{}{}; panic("a callback that panics") })

	ended, cancel := context.WithCancel(t.Context())
	cancel()
	assert.False(t, c.Wait(ended), "two under way, and the context ended")
	close(release)
	require.True(t, c.Wait(t.Context()))
	assert.Len(t, ran, 2, "Wait returned after both ran, the panicking one too")
	assert.True(t, c.Wait(t.Context()), "and again")
}

func TestCallReturnsThePanic(t *testing.T) {
	assert.Nil(t, scheduler.Call(func() {}))
	assert.Equal(t, "boom", scheduler.Call(func() { panic("boom") }))
}
