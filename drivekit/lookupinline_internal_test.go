package drivekit

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// onGoroutine is a looking store that records, for each Look, whether
// it ran on the kit's own goroutine (lookAside on its stack).
type onGoroutine struct {
	*looking
	aside []bool
}

func (g *onGoroutine) Look(ctx context.Context, keys [][]byte, dst []contract.Presence) []contract.Presence {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(1, pcs)])
	aside := false
	for {
		f, more := frames.Next()
		aside = aside || strings.HasSuffix(f.Function, ".lookAside")
		if !more {
			break
		}
	}
	g.lookMu.Lock()
	g.aside = append(g.aside, aside)
	g.lookMu.Unlock()
	return g.looking.Look(ctx, keys, dst)
}

// A store whose Look may block is asked on a goroutine of the kit's
// only when the caller's context can end; a context without a Done
// channel has nothing to abandon the call for, and the store is asked
// on the caller's goroutine, answering as the other way does.
func TestALookupWhoseContextCannotEndAsksInline(t *testing.T) {
	g := &onGoroutine{looking: &looking{holding: newHolding(&verdicts{}, false), blocks: true}}
	d, reg, err := newRig(g)
	require.NoError(t, err)
	bounded, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, ctx := range []context.Context{bounded, context.Background(), context.WithoutCancel(bounded)} {
		got, err := d.Lookup(ctx, names("x", "y"), nil)
		require.NoError(t, err)
		assert.Equal(t, each(contract.Present, 2), got)
	}
	assert.Equal(t, []bool{true, false, false}, g.aside, "only the context that can end is asked aside")
	teardown(t, d, reg)
}

// A batch the caller marks Distinct is not checked for a repeated name
// again (the binding's backend cut it at one); without the mark a
// repeated key is refused before the store is asked. Everything else is
// refused either way.
func TestADistinctBatchSkipsOnlyTheRepeatCheck(t *testing.T) {
	l := &looking{holding: newHolding(&verdicts{}, false)}
	d, reg, err := newRig(l)
	require.NoError(t, err)
	ctx := context.Background()

	twice := names("x", "y", "x")
	_, err = d.Lookup(ctx, twice, nil)
	require.ErrorIs(t, err, contract.ErrDriverRejected)
	assert.ErrorContains(t, err, "names 0 and 2 make one key")
	assert.Zero(t, l.lookCalls(), "a refused lookup asks the store nothing")

	twice.Distinct = true
	got, err := d.Lookup(ctx, twice, nil)
	require.NoError(t, err)
	assert.Equal(t, each(contract.Present, 3), got)

	empty := names("x", "")
	empty.Distinct = true
	_, err = d.Lookup(ctx, empty, nil)
	require.ErrorIs(t, err, contract.ErrDriverRejected, "an empty name is refused, Distinct or not")
	assert.Equal(t, 1, l.lookCalls())
	teardown(t, d, reg)
}
