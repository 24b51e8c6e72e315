package nodeclient_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/patience"
)

// dialProcess dials the node process; the client must watch it by a
// pidfd of its own pid.
func dialProcess(t *testing.T, p *nodeProc) *nodeclient.Client {
	t.Helper()
	c, err := nodeclient.Dial(bounded(t), p.path, nodeclient.Options{Engine: "engine", Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	w := c.Watch()
	require.Truef(t, w.Proves, "the client has no pidfd of the node: %s", w.Via)
	assert.Equal(t, p.pid(), w.PID)
	assert.Contains(t, []string{"SO_PEERPIDFD", "pidfd_open of the SO_PEERCRED pid"}, w.Via)
	return c
}

// short is a context that ends soon: the input of a call that must give
// up, not a bound on progress.
func short(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}

// lostOf returns the *NodeLostError in err's chain.
func lostOf(t *testing.T, err error) *nodeclient.NodeLostError {
	t.Helper()
	var lost *nodeclient.NodeLostError
	require.Truef(t, errors.As(err, &lost), "want a *NodeLostError in %v", err)
	require.ErrorIs(t, lost, nodeclient.ErrClosed)
	return lost
}

// A closed connection proves nothing: the node process closes the
// engine's connection after accepting a fetch and goes on writing the
// fetch's slot. The attempt's forced outcome carries EvidenceUnknown,
// the slot is seen changing after it, the attempt does not quiesce, the
// node's exit is not seen within a context that ends, and the lend's
// return fails and keeps the memory. Once the process is SIGKILLed, the
// exit is proven only with the process gone; then the attempt
// quiesces, the slot no longer changes, and the return frees the lend.
func TestAClosedConnectionIsNoEvidence(t *testing.T) {
	p := startNodeProcess(t, modeWriter)
	c := dialProcess(t, p)
	ctx := bounded(t)
	l, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: 64, SlotCount: 4})
	require.NoError(t, err)
	slot := l.Slot(0, 2)
	a, err := l.Fetch(ctx, view(group(0, []int32{2}, "row")), nodeclient.TransferOptions{})
	require.NoError(t, err)
	p.expect("closed the connection, writing on")

	o, err := a.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, []contract.RowStatus{contract.Pending}, o.Rows)
	assert.Equal(t, nodeclient.EvidenceUnknown, lostOf(t, o.Fault).Evidence, "the node process lives")
	require.True(t, patienceWait(t, c.Done()))
	assert.Equal(t, nodeclient.EvidenceUnknown, lostOf(t, c.Err()).Evidence)

	// The node still writes the slot after the end of the connection.
	seen := bytes.Clone(slot)
	wrote, cancel := patience.Bound{Span: patience.Wait(), What: "the node process writing the slot", Logf: t.Logf}.Context(t.Context())
	defer cancel()
	poll := time.NewTicker(time.Millisecond) // the slot is polled: nothing says when the node writes it
	defer poll.Stop()
	for bytes.Equal(seen, slot) {
		select {
		case <-poll.C:
		case <-wrote.Done():
			t.Fatalf("the node process never wrote the slot after the connection ended: %v", wrote.Err())
		}
	}
	assert.Equal(t, nodeclient.EvidenceUnknown, c.Evidence())
	assert.ErrorIs(t, c.WaitNodeExit(short(t)), context.DeadlineExceeded)
	assert.False(t, a.Quiesced())
	err = l.Return(short(t))
	assert.Equal(t, nodeclient.EvidenceUnknown, lostOf(t, err).Evidence)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	lends, _ := c.Lent()
	assert.Equal(t, 1, lends, "a lend cut off from a live node is kept")

	killed := time.Now()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	require.NoError(t, c.WaitNodeExit(ctx))
	took := time.Since(killed)
	require.True(t, p.gone(), "the exit was proven before the node process was gone")
	t.Logf("node killed → exit proven: %v", took)
	assert.Equal(t, nodeclient.NodeExited, c.Evidence())
	require.True(t, patienceWait(t, a.Done()), "a cut-off attempt quiesces once the node's exit is proven")
	assert.True(t, a.Quiesced())
	require.NoError(t, l.Return(ctx))
	lends, lent := c.Lent()
	assert.Zero(t, lends)
	assert.Zero(t, lent)
}

// A node process SIGKILLed mid-fetch, with a second lend's memfd sent
// and never answered: the fetch's outcome is forced with a
// *NodeLostError, every call after fails with one, and the evidence
// becomes NodeExited only with the process gone. Then the fetch
// quiesces, the unanswered lend (nobody holds it) is freed by the
// client, and the held lend's return frees it; a client with nothing
// cut off lets the node's pidfd go.
func TestNodeKilledMidFetch(t *testing.T) {
	p := startNodeProcess(t, modeHold)
	c := dialProcess(t, p)
	ctx := bounded(t)
	g := nodeclient.Geometry{SlotBytes: 64, SlotCount: 4}
	l, err := c.Lend(ctx, g)
	require.NoError(t, err)
	a, err := l.Fetch(ctx, view(group(0, nil, "x", "y")), nodeclient.TransferOptions{})
	require.NoError(t, err)
	p.expect("accepted get")
	second := make(chan error, 1)
	go func() {
		_, err := c.Lend(ctx, g)
		second <- err
	}()
	p.expect("lend held")
	lends, _ := c.Lent()
	require.Equal(t, 2, lends)

	killed := time.Now()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	o, err := a.Wait(ctx)
	require.NoError(t, err)
	lost := lostOf(t, o.Fault)
	if lost.Evidence == nodeclient.EvidenceUnknown {
		require.NoError(t, c.WaitNodeExit(ctx)) // the exit came after the grace
	}
	took := time.Since(killed)
	require.True(t, p.gone(), "the exit was proven before the node process was gone")
	t.Logf("node killed → exit proven: %v (evidence in the forced outcome: %v)", took, lost.Evidence)
	assert.Equal(t, []contract.RowStatus{contract.Pending, contract.Pending}, o.Rows)

	require.True(t, patienceWait(t, a.Done()), "the fetch quiesces once the node's exit is proven")
	require.True(t, patienceWait(t, c.Done()))
	lostOf(t, c.Err())
	var lendErr error
	select {
	case lendErr = <-second:
	case <-ctx.Done():
		t.Fatal("the unanswered lend did not end with the connection")
	}
	lostOf(t, lendErr)
	lends, _ = c.Lent()
	assert.Equal(t, 1, lends, "the unanswered lend is freed once the node's exit is proven")
	_, err = l.Fetch(ctx, view(group(0, nil, "x")), nodeclient.TransferOptions{})
	lostOf(t, err)
	require.NoError(t, l.Return(ctx))
	lends, _ = c.Lent()
	assert.Zero(t, lends)
}
