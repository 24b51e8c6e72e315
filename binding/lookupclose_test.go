package binding

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// lookupWitness is a fake driver with a lookup that holds its first call
// until let is closed (or its context ends), and records each call the
// contract does not allow beside a lookup: Drain, Unregister or Close
// while a lookup is inside, and a lookup after Close. Its Drain, like the
// fake's, answers true at once.
type lookupWitness struct {
	*fakeDriver
	entered chan struct{}
	let     chan struct{}

	mu     sync.Mutex
	inside int
	calls  int
	closed bool
	broken []string
}

func newLookupWitness() *lookupWitness {
	return &lookupWitness{fakeDriver: newFake(getPut), entered: make(chan struct{}, 1), let: make(chan struct{})}
}

func (w *lookupWitness) Lookup(ctx context.Context, b contract.LookupBatch, dst []contract.Presence) ([]contract.Presence, error) {
	w.mu.Lock()
	if w.closed {
		w.broken = append(w.broken, "a lookup after Close")
	}
	w.inside++
	w.calls++
	first := w.calls == 1
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.inside--
		w.mu.Unlock()
	}()
	dst = dst[:0]
	if first {
		w.entered <- struct{}{}
		select {
		case <-w.let:
		case <-ctx.Done():
			for range b.Names {
				dst = append(dst, contract.Unknown)
			}
			return dst, nil
		}
	}
	for range b.Names {
		dst = append(dst, contract.Present)
	}
	return dst, nil
}

// beside records what was called while a lookup was inside.
func (w *lookupWitness) beside(call string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inside > 0 {
		w.broken = append(w.broken, call+" while a lookup was inside")
	}
	if call == "Close" {
		w.closed = true
	}
}

func (w *lookupWitness) Drain(ctx context.Context) bool {
	w.beside("Drain")
	return w.fakeDriver.Drain(ctx)
}

func (w *lookupWitness) Unregister(h contract.Registration) error {
	w.beside("Unregister")
	return w.fakeDriver.Unregister(h)
}

func (w *lookupWitness) Close() error {
	w.beside("Close")
	return w.fakeDriver.Close()
}

func (w *lookupWitness) Broken() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.broken...)
}

// Close meets a lookup inside the driver: it never drains, unregisters
// or closes beside it, a Close whose context ends first says so and
// keeps the driver open, and the lookup, once its call returns, makes no
// further call (the rows it did not ask are Unknown) before Close
// finishes.
func TestCloseMeetsALookup(t *testing.T) {
	w := newLookupWitness()
	hold := &countingHold{}
	b, err := Open(t.Context(), Loan{Regions: []contract.SlotRegion{fakeRegion(0, contract.Host)}, Hold: hold}, w, quietConfig)
	require.NoError(t, err)
	type answer struct {
		res LookupResult
		err error
	}
	looked := make(chan answer, 1)
	go func() {
		res, err := b.Lookup(context.Background(), layers(2, 2), LookupOptions{Every: true})
		looked <- answer{res, err}
	}()
	receive(t, w.entered, "the lookup entering the driver")

	err = b.Close(ended(t))
	var held *HeldError
	require.ErrorAs(t, err, &held)
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, ErrHeldForGood, "a lookup in flight ends")
	assert.Contains(t, held.Held, "lookups in flight (1)")
	assert.Zero(t, hold.Released())

	closed := make(chan error, 1)
	go func() { closed <- b.Close(context.Background()) }()
	close(w.let)
	got := receive(t, looked, "the lookup once its call returned")
	require.NoError(t, receive(t, closed, "Close once the lookup returned"))
	assert.ErrorIs(t, got.err, contract.ErrSubmissionRejected, "the backend shut down before its next call")
	P, U := contract.Present, contract.Unknown
	assert.Equal(t, []contract.Presence{P, P, U, U}, got.res.Rows)
	assert.Empty(t, w.Broken())
	assert.Equal(t, 1, hold.Released())
	w.mu.Lock()
	assert.True(t, w.closed)
	w.mu.Unlock()
}

// callWitness is a fake driver that answers every call at once and
// records each call the contract does not allow: Drain, Unregister or
// Close while a Put, Get or Lookup is inside the driver, and any call
// after Close.
type callWitness struct {
	*fakeDriver
	mu     sync.Mutex
	inside int
	closed bool
	broken []string
}

func newCallWitness() *callWitness {
	w := &callWitness{fakeDriver: newFake(getPut)}
	w.answer = func(direction, string) contract.RowStatus { return contract.Ready }
	return w
}

func (w *callWitness) enter(call string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		w.broken = append(w.broken, call+" after Close")
	}
	w.inside++
}

func (w *callWitness) leave() {
	w.mu.Lock()
	w.inside--
	w.mu.Unlock()
}

func (w *callWitness) alone(call string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		w.broken = append(w.broken, call+" after Close")
	}
	if w.inside > 0 {
		w.broken = append(w.broken, call+" beside a Put, Get or Lookup")
	}
	if call == "Close" {
		w.closed = true
	}
}

func (w *callWitness) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	w.enter("Put")
	defer w.leave()
	return w.fakeDriver.Put(b, onChange)
}

func (w *callWitness) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	w.enter("Get")
	defer w.leave()
	return w.fakeDriver.Get(b, h, onChange)
}

func (w *callWitness) Lookup(_ context.Context, b contract.LookupBatch, dst []contract.Presence) ([]contract.Presence, error) {
	w.enter("Lookup")
	defer w.leave()
	dst = dst[:0]
	for range b.Names {
		dst = append(dst, contract.Present)
	}
	return dst, nil
}

func (w *callWitness) Drain(ctx context.Context) bool {
	w.alone("Drain")
	return w.fakeDriver.Drain(ctx)
}

func (w *callWitness) Unregister(h contract.Registration) error {
	w.alone("Unregister")
	return w.fakeDriver.Unregister(h)
}

func (w *callWitness) Close() error {
	w.alone("Close")
	return w.fakeDriver.Close()
}

// Close meets submitters and lookers that go on until they are refused:
// whichever way they interleave, the driver is drained, unregistered and
// closed only with no Put, Get or Lookup inside it, nothing reaches it
// after its Close, and Close finishes.
func TestCloseMeetsSubmissionsAndLookups(t *testing.T) {
	for range rounds / 2 {
		w := newCallWitness()
		hold := &countingHold{}
		b, err := Open(t.Context(), Loan{Regions: []contract.SlotRegion{fakeRegion(0, contract.Host)}, Hold: hold}, w, quietConfig)
		require.NoError(t, err)
		var wg sync.WaitGroup
		started := make(chan struct{}, 3)
		for _, work := range []func() error{
			func() error { _, err := b.Publish(rowsView(2), nil); return err },
			func() error { _, err := b.Fetch(rowsView(2), nil); return err },
			func() error { _, err := b.Lookup(context.Background(), layers(2, 2), LookupOptions{}); return err },
		} {
			wg.Go(func() {
				started <- struct{}{}
				for work() == nil {
				}
			})
		}
		for range 3 {
			receive(t, started, "a submitter starting")
		}
		closed := make(chan error, 1)
		go func() { closed <- b.Close(context.Background()) }()
		require.NoError(t, receive(t, closed, "Close beside submitters and lookers"))
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		waitFor(t, done, "every submitter refused")
		w.mu.Lock()
		require.Empty(t, w.broken)
		require.True(t, w.closed)
		w.mu.Unlock()
		require.Equal(t, 1, hold.Released())
	}
}
