package binding

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/patience"
)

// TestChangesAnnouncedDuringAPollCostOnePollMore: while one goroutine
// polls a call, the driver's further announcements do not wait for it
// (a driver's workers are never held up by the backend's bookkeeping);
// each leaves a mark, and the goroutine polling polls once more when it
// lets go, so the change they announce is recorded — by one poll, not
// one poll an announcement (n rows announcing their ends one by one
// would otherwise cost n polls of n rows).
func TestChangesAnnouncedDuringAPollCostOnePollMore(t *testing.T) {
	d := newFake(getPut)
	b, _ := fakeBackend(t, d, 1, Config{})
	a, err := b.Fetch(rowsView(4), nil)
	require.NoError(t, err)
	op := d.Ops()[0]

	var polls atomic.Int32
	inPoll, release := make(chan struct{}), make(chan struct{})
	op.setPoll(func(st contract.OpState) contract.OpState {
		if polls.Add(1) == 1 {
			close(inPoll)
			<-release
		}
		return st
	})
	go op.onChange() // the first poll: held inside Poll, rows still pending
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	select {
	case <-inPoll:
	case <-ctx.Done():
		t.Fatal("the first poll never came")
	}

	op.mu.Lock()
	for i := range op.st.Rows {
		op.st.Rows[i] = contract.Ready
	}
	op.st.Access = contract.Ended
	op.mu.Unlock()
	announced := make(chan struct{})
	go func() {
		for range 100 {
			op.onChange()
		}
		close(announced)
	}()
	select {
	case <-announced: // none waited for the poll under way
	case <-ctx.Done():
		close(release)
		t.Fatal("an announcement waited for the poll under way")
	}
	require.False(t, a.Quiesced(), "nothing recorded while the first poll is held")

	close(release)
	select {
	case <-a.Done():
	case <-ctx.Done():
		t.Fatal("the change announced during the poll was never recorded")
	}
	out, ok := a.Outcome()
	require.True(t, ok)
	require.Equal(t, 4, out.Prefix())
	require.EqualValues(t, 2, polls.Load(), "the held poll and one more for the hundred announcements")
}
