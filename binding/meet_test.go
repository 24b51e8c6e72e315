package binding

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/patience"
)

// When the backend's blocking calls meet: each test here stages two of
// them at once, many times over, and asserts what the documentation
// promises whichever way they interleave. None asserts a duration: every
// wait is bounded by patience.

// rounds is how many times a meeting is staged in one run of a test.
const rounds = 50

// waitFor waits, within a patient bound, for done to be closed, and
// fails the test naming what did not happen.
func waitFor(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	if !(patience.Bound{Span: patience.Wait(), What: what, Logf: t.Logf}).Wait(done) {
		t.Fatalf("%s: still waiting after the patient bound", what)
	}
}

// receive waits, within a patient bound, for a value on ch.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	var v T
	done := make(chan struct{})
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case v = <-ch:
			close(done)
		case <-stop:
		}
	}()
	waitFor(t, done, what)
	return v
}

// statsLoop reads Stats in a loop, as a metrics exporter does, until the
// returned stop is called.
func statsLoop(b *Backend) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-quit:
				return
			default:
				_ = b.Stats()
				runtime.Gosched() // a busy reader, not a hog: on one P the others run too
			}
		}
	})
	return func() { close(quit); wg.Wait() }
}

// A Close running when the automatic reclaim gives back the call that
// stopped it finishes: every attempt quiesces, the regions are
// unregistered, the hold released and the driver closed, while Stats is
// read in a loop.
func TestCloseMeetsTheAutomaticReclaim(t *testing.T) {
	for range rounds {
		l := newLender(t, 4, contract.Host)
		store := memdrv.NewStore()
		d := memdrv.New(store, memdrv.Options{})
		b, err := Open(t.Context(), Loan{Regions: l.Regions(), Hold: l}, d, Config{Logger: quietConfig.Logger, ReclaimAbove: lenderSlotBytes})
		require.NoError(t, err)
		key := memKey(t, b, "n0")
		store.Set(key, bytes.Repeat([]byte{1}, lenderSlotBytes))
		d.UnprovableGets(key)
		gate := d.Hold(memdrv.GetDir)
		a, err := b.Fetch(rowsView(1), nil)
		require.NoError(t, err)
		require.NoError(t, gate.Held(t.Context()))
		stop := statsLoop(b)

		closed := make(chan error, 1)
		go func() { closed <- b.Close(context.Background()) }()
		waitFor(t, a.Known(), "Close forcing the outcome") // Close is running
		gate.Release()
		err = receive(t, closed, "Close after the automatic reclaim")
		stop()
		require.NoError(t, err)
		require.Equal(t, 1, l.Released())
		require.True(t, driverClosed(t, d, l.Regions()[0]))
	}
}

// withCancel returns a context that has already ended: an input that
// makes a call give up, not a bound on anything.
func ended(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx
}

// A Close with a deadline returns when its context ends, while another
// Close without one waits for a held call: Close honours its own
// context whatever another goroutine does.
func TestACloseWithADeadlineDoesNotWaitBehindAnother(t *testing.T) {
	l := newLender(t, 4, contract.Host)
	b, d, store := openOver(t, l, memdrv.Options{}, quietConfig)
	store.Set(memKey(t, b, "n0"), bytes.Repeat([]byte{1}, lenderSlotBytes))
	gate := d.Hold(memdrv.GetDir)
	defer gate.Release()
	a, err := b.Fetch(rowsView(1), nil)
	require.NoError(t, err)
	require.NoError(t, gate.Held(t.Context()))

	first := make(chan error, 1)
	go func() { first <- b.Close(context.Background()) }()
	waitFor(t, a.Known(), "the first Close forcing the outcome") // it waits for the held call

	done := make(chan struct{})
	var err2 error
	go func() {
		defer close(done)
		err2 = b.Close(ended(t))
	}()
	waitFor(t, done, "a Close whose context ended, beside a Close without one")
	var held *HeldError
	require.ErrorAs(t, err2, &held)
	require.ErrorIs(t, err2, context.Canceled)
	require.NotErrorIs(t, err2, ErrHeldForGood)
	require.Contains(t, held.Held, "attempt 1 (fetch)")

	gate.Release()
	require.NoError(t, receive(t, first, "the first Close once the call ended"))
	require.NoError(t, b.Close(ended(t)), "after nil, Close does nothing, whatever its context")
	require.Equal(t, 1, l.Released())
}

// gatedRecycle holds a memdrv driver's Recycle until let is closed (or
// its context ends), after saying it entered.
type gatedRecycle struct {
	*memdrv.Driver
	entered chan struct{}
	let     chan struct{}
	after   func() // runs after the driver's Recycle returned nil
}

func newGatedRecycle(d *memdrv.Driver) *gatedRecycle {
	return &gatedRecycle{Driver: d, entered: make(chan struct{}, 16), let: make(chan struct{})}
}

func (g *gatedRecycle) Recycle(ctx context.Context) error {
	g.entered <- struct{}{}
	select {
	case <-g.let:
	case <-ctx.Done():
		return fmt.Errorf("%w: gated recycle: %w", contract.ErrDriverRejected, ctx.Err())
	}
	err := g.Driver.Recycle(ctx)
	if err == nil && g.after != nil {
		g.after()
	}
	return err
}

// A Reclaim with a deadline returns when its context ends while another
// Reclaim, without one, is inside the driver's Recycle.
func TestAReclaimWithADeadlineDoesNotWaitBehindAnother(t *testing.T) {
	l := newLender(t, 4, contract.Host)
	store := memdrv.NewStore()
	g := newGatedRecycle(memdrv.New(store, memdrv.Options{}))
	b := memBackend(t, g, l, quietConfig)
	key := memKey(t, b, "n0")
	store.Set(key, bytes.Repeat([]byte{1}, lenderSlotBytes))
	g.UnprovableGets(key)
	a, err := b.Fetch(rowsView(1), nil)
	require.NoError(t, err)
	_, err = a.Wait(t.Context())
	require.NoError(t, err)

	first := make(chan error, 1)
	go func() {
		_, err := b.Reclaim(context.Background())
		first <- err
	}()
	receive(t, g.entered, "the first Reclaim entering Recycle")

	done := make(chan struct{})
	var err2 error
	go func() {
		defer close(done)
		_, err2 = b.Reclaim(ended(t))
	}()
	waitFor(t, done, "a Reclaim whose context ended, beside a Reclaim inside Recycle")
	require.ErrorIs(t, err2, context.Canceled)

	close(g.let)
	require.NoError(t, receive(t, first, "the first Reclaim once Recycle goes on"))
	require.True(t, a.Quiesced())
	require.NoError(t, b.Close(t.Context()))
	require.NoError(t, g.Close())
}

// busyRegions answers every Unregister busy, saying so on asked, until
// free is closed.
type busyRegions struct {
	*fakeDriver
	asked chan struct{}
	free  chan struct{}
}

func (d *busyRegions) Unregister(h contract.Registration) error {
	select {
	case <-d.free:
		return d.fakeDriver.Unregister(h)
	default:
	}
	select {
	case d.asked <- struct{}{}:
	default:
	}
	return fmt.Errorf("%w: unregister %d: busy", contract.ErrDriverRejected, h)
}

// An Unbind with a deadline returns when its context ends while another
// Unbind, without one, retries a region the driver calls busy.
func TestAnUnbindWithADeadlineDoesNotWaitBehindAnother(t *testing.T) {
	d := &busyRegions{fakeDriver: newFake(getPut), asked: make(chan struct{}, 1), free: make(chan struct{})}
	hold := &countingHold{}
	r, err := Bind(d, []contract.SlotRegion{fakeRegion(0, contract.Host)}, hold)
	require.NoError(t, err)

	first := make(chan error, 1)
	go func() { first <- r.Unbind(context.Background()) }()
	receive(t, d.asked, "the first Unbind asking the driver")

	done := make(chan struct{})
	var err2 error
	go func() {
		defer close(done)
		err2 = r.Unbind(ended(t))
	}()
	waitFor(t, done, "an Unbind whose context ended, beside an Unbind retrying a busy region")
	require.ErrorIs(t, err2, context.Canceled)
	require.ErrorContains(t, err2, "region 0")
	require.Zero(t, hold.Released())

	close(d.free)
	require.NoError(t, receive(t, first, "the first Unbind once the region is free"))
	require.Equal(t, 1, hold.Released())
}

// A call admitted after a Recycle returned, and held as unprovable before
// the reclaim read the calls again, is no proof that Recycle broke its
// promise: it stays held (for the next reclaim), the reclaim gives back
// what Recycle ended, and the backend takes submissions on.
func TestACallHeldAfterARecycleStaysHeld(t *testing.T) {
	l := newLender(t, 4, contract.Host)
	store := memdrv.NewStore()
	g := newGatedRecycle(memdrv.New(store, memdrv.Options{}))
	close(g.let)
	b := memBackend(t, g, l, quietConfig)
	for _, n := range []string{"n0", "n1"} {
		key := memKey(t, b, n)
		store.Set(key, bytes.Repeat([]byte{1}, lenderSlotBytes))
		g.UnprovableGets(key)
	}
	first, err := b.Fetch(rowsView(1), nil)
	require.NoError(t, err)
	waitFor(t, first.Known(), "the first fetch's outcome")

	v := contract.View{Groups: []contract.Group{{Slots: []int32{1}, Names: [][]byte{[]byte("n1")}}}}
	var late contract.Attempt
	g.after = func() { // Recycle has returned; the reclaim has not read the calls again yet
		g.after = nil
		var err error
		late, err = b.Fetch(v, nil)
		require.NoError(t, err)
		waitFor(t, late.Known(), "the late fetch's outcome") // its call is held as unprovable now
	}
	got, err := b.Reclaim(t.Context())
	require.NoError(t, err)
	require.EqualValues(t, 1, got.Calls, "the call Recycle ended is given back")
	st := b.Stats()
	require.Empty(t, st.Violation, "a call admitted after the Recycle proves nothing against it")
	require.EqualValues(t, 1, st.CallsUnprovable, "the late call stays held")
	waitFor(t, first.Done(), "the first fetch quiescing")
	require.False(t, late.Quiesced())

	_, err = b.Reclaim(t.Context())
	require.NoError(t, err)
	waitFor(t, late.Done(), "the late fetch quiescing after the next reclaim")
	require.NoError(t, b.Close(t.Context()))
	require.NoError(t, g.Close())
}

// A reclaim that gives back, right after the retiring goroutine decided
// to stop (every attempt left held an unprovable call), finds it
// stopped and starts it again: the Close that follows finishes.
func TestAReclaimInTheRetiringGoroutinesLastStep(t *testing.T) {
	for range rounds {
		l := newLender(t, 4, contract.Host)
		b, d, store := openOver(t, l, memdrv.Options{}, quietConfig)
		key := memKey(t, b, "n0")
		store.Set(key, bytes.Repeat([]byte{1}, lenderSlotBytes))
		d.UnprovableGets(key)
		a, err := b.Fetch(rowsView(1), nil)
		require.NoError(t, err)
		waitFor(t, a.Known(), "the fetch's outcome")
		reclaimed := make(chan error, 1)
		b.retireStopped = func() {
			b.retireStopped = nil // the goroutine a give-back starts again stops no more here
			_, err := b.Reclaim(t.Context())
			reclaimed <- err
		}
		b.Shutdown(ended(t)) // starts the retiring goroutine, which stops at the held call
		require.NoError(t, receive(t, reclaimed, "the reclaim in the retiring goroutine's last step"))

		ctx, cancel := (patience.Bound{Span: patience.Wait(), What: "Close after the reclaim", Logf: t.Logf}).Context(t.Context())
		err = b.Close(ctx)
		cancel()
		require.NoError(t, err)
		require.Equal(t, 1, l.Released())
		require.True(t, driverClosed(t, d, l.Regions()[0]))
	}
}

// recycleWitness is a gatedRecycle that records each driver call the
// contract does not allow beside a Recycle: Drain, Unregister or Close.
type recycleWitness struct {
	*gatedRecycle
	mu        sync.Mutex
	recycling bool
	broken    []string
}

func (w *recycleWitness) Recycle(ctx context.Context) error {
	w.mu.Lock()
	w.recycling = true
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.recycling = false
		w.mu.Unlock()
	}()
	return w.gatedRecycle.Recycle(ctx)
}

func (w *recycleWitness) beside(call string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.recycling {
		w.broken = append(w.broken, call+" while a Recycle ran")
	}
}

func (w *recycleWitness) Drain(ctx context.Context) bool {
	w.beside("Drain")
	return w.gatedRecycle.Drain(ctx)
}

func (w *recycleWitness) Unregister(h contract.Registration) error {
	w.beside("Unregister")
	return w.gatedRecycle.Unregister(h)
}

func (w *recycleWitness) Close() error {
	w.beside("Close")
	return w.gatedRecycle.Close()
}

// Close meets a Reclaim inside the driver's Recycle, with every attempt
// quiesced: it waits for the reclaim (a Close whose context ends says
// so), never drains, unregisters or closes beside it, and finishes once
// it returned; a Reclaim after that is refused.
func TestCloseMeetsAReclaim(t *testing.T) {
	l := newLender(t, 4, contract.Host)
	w := &recycleWitness{gatedRecycle: newGatedRecycle(memdrv.New(memdrv.NewStore(), memdrv.Options{}))}
	b, err := Open(t.Context(), Loan{Regions: l.Regions(), Hold: l}, w, quietConfig)
	require.NoError(t, err)
	reclaimed := make(chan error, 1)
	go func() {
		_, err := b.Reclaim(context.Background())
		reclaimed <- err
	}()
	receive(t, w.entered, "the reclaim entering Recycle")

	err = b.Close(ended(t))
	var held *HeldError
	require.ErrorAs(t, err, &held)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, ErrHeldForGood, "a reclaim under way may change what is held")
	require.Contains(t, held.Held, "reclaim under way")

	closed := make(chan error, 1)
	go func() { closed <- b.Close(context.Background()) }()
	close(w.let)
	require.NoError(t, receive(t, reclaimed, "the reclaim once Recycle goes on"))
	require.NoError(t, receive(t, closed, "Close once the reclaim ended"))
	w.mu.Lock()
	require.Empty(t, w.broken)
	w.mu.Unlock()
	require.Equal(t, 1, l.Released())
	_, err = b.Reclaim(t.Context())
	require.ErrorIs(t, err, ErrNotRecyclable, "nothing is held any more")
}
