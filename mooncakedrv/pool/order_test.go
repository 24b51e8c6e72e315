package pool

import (
	"log/slog"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Zero asks for each default; a value below zero is refused, the smallest
// ones allowed are taken, and a given logger is kept.
func TestOptionsEdges(t *testing.T) {
	o, err := Options{Dir: "/m"}.withDefaults()
	require.NoError(t, err)
	assert.Positive(t, o.SegmentSize)
	assert.Positive(t, o.LocalBufferSize)
	assert.Positive(t, o.StartTimeout)
	assert.Positive(t, o.StopTimeout)
	assert.Positive(t, o.Attempts)

	for name, o := range map[string]Options{
		"negative local buffer": {LocalBufferSize: -1},
		"negative start":        {StartTimeout: -1},
		"negative stop":         {StopTimeout: -1},
	} {
		_, err := o.withDefaults()
		assert.ErrorIs(t, err, ErrOptions, name)
	}

	logger := slog.New(slog.DiscardHandler)
	o, err = Options{Dir: "/m", Logger: logger, PutDiscardTimeout: 2 * time.Second, PutReleaseTimeout: 2 * time.Second}.withDefaults()
	require.NoError(t, err, "a release timeout equal to the discard timeout")
	assert.Same(t, logger, o.Logger)
}

// Stop stops every provider before any master, the newest of each first.
func TestStopOrder(t *testing.T) {
	m1, p1, m2, p2 := &process{role: Master, pid: 1}, &process{role: Provider, pid: 2}, &process{role: Master, pid: 3}, &process{role: Provider, pid: 4}
	assert.Equal(t, []*process{p2, p1, m2, m1}, stopOrder([]*process{m1, p1, m2, p2}))
	assert.Empty(t, stopOrder(nil))
}

// waitState returns once the process shows the state asked for, and
// fails, naming the process, when it does not within StopTimeout.
func TestWaitState(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pr := &process{role: Provider, pid: cmd.Process.Pid, exited: make(chan struct{})}
	p := &Pool{opts: Options{StopTimeout: 200 * time.Millisecond}}

	require.NoError(t, p.waitState(pr, func(s byte) bool { return s == 'S' || s == 'R' }, "running"))
	err := p.waitState(pr, func(s byte) bool { return s == 'T' }, "stopped")
	require.ErrorIs(t, err, ErrState)
	assert.Contains(t, err.Error(), "not stopped after 200ms")
}
