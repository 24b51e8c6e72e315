package pool

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/loopback"
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
	m1, p1 := &loopback.Process{Name: string(Master), PID: 1}, &loopback.Process{Name: string(Provider), PID: 2}
	m2, p2 := &loopback.Process{Name: string(Master), PID: 3}, &loopback.Process{Name: string(Provider), PID: 4}
	assert.Equal(t, []*loopback.Process{p2, p1, m2, m1}, stopOrder([]*loopback.Process{m1, p1, m2, p2}))
	assert.Empty(t, stopOrder(nil))
}
