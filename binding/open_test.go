package binding

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

var quietConfig = Config{Logger: slog.New(slog.DiscardHandler)}

// driverClosed reports whether a memdrv driver was closed: a closed one
// refuses a registration, saying so.
func driverClosed(t *testing.T, d *memdrv.Driver, r contract.SlotRegion) bool {
	t.Helper()
	reg, err := d.Register(r)
	if err == nil {
		require.NoError(t, d.Unregister(reg))
		return false
	}
	return bytes.Contains([]byte(err.Error()), []byte("driver closed"))
}

// openOver opens a backend over a fresh memdrv driver on the lender's
// regions.
func openOver(t *testing.T, l *lender, o memdrv.Options, cfg Config) (*Backend, *memdrv.Driver, *memdrv.Store) {
	t.Helper()
	store := memdrv.NewStore()
	d := memdrv.New(store, o)
	b, err := Open(t.Context(), Loan{Regions: l.Regions(), Hold: l}, d, cfg)
	require.NoError(t, err)
	return b, d, store
}

func TestOpenAndCloseGiveEverythingBack(t *testing.T) {
	l := newLender(t, 8, contract.Host)
	b, d, _ := openOver(t, l, memdrv.Options{}, quietConfig)
	l.fill(0, 0, 7)
	a, err := b.Publish(rowsView(1), nil)
	require.NoError(t, err)
	out, err := a.Wait(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []contract.RowStatus{contract.Ready}, out.Rows)

	require.NoError(t, b.Close(t.Context()))
	assert.Equal(t, 1, l.Released(), "the hold, released once")
	assert.True(t, driverClosed(t, d, l.Regions()[0]), "the backend owned its driver and closed it, last")
	require.NoError(t, b.Close(t.Context()), "a second Close does nothing")
	assert.Equal(t, 1, l.Released())
	_, err = b.Fetch(rowsView(1), nil)
	assert.ErrorIs(t, err, contract.ErrSubmissionRejected)
}

// The default key prefix: a Config that names none stores under
// "kvshare".
func TestOpenWithTheDefaultKeyPrefix(t *testing.T) {
	l := newLender(t, 2, contract.Host)
	b, _, store := openOver(t, l, memdrv.Options{}, quietConfig)
	a, err := b.Publish(rowsView(1), nil)
	require.NoError(t, err)
	_, err = a.Wait(t.Context())
	require.NoError(t, err)
	_, ok := store.Object(memKey(t, b, "n0"))
	assert.True(t, ok)
	assert.Regexp(t, `^kvshare/`, memKey(t, b, "n0"))
	require.NoError(t, b.Close(t.Context()))
}

// Every way Open can fail leaves one owner for the memory: released
// (free it) or, with a registration that may be live, kept with a way
// to end it.
func TestOpenFailuresHaveOneOwner(t *testing.T) {
	t.Run("a config it refuses", func(t *testing.T) {
		l := newLender(t, 2, contract.Host)
		d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
		b, err := Open(t.Context(), Loan{Regions: l.Regions(), Hold: l}, d, Config{KeyPrefix: "a b"})
		require.ErrorIs(t, err, ErrConfig)
		assert.Nil(t, b)
		assert.Equal(t, 1, l.Released(), "the hold is released: the memory is the lender's")
		assert.Empty(t, d.Regions(), "nothing registered")
		assert.True(t, driverClosed(t, d, l.Regions()[0]), "Open took the driver and closed it")
	})
	t.Run("a construction it refuses", func(t *testing.T) {
		l := newLender(t, 2, contract.Device)
		d := memdrv.New(memdrv.NewStore(), memdrv.Options{}) // no DeviceMemory
		_, err := Open(t.Context(), Loan{Regions: l.Regions(), Hold: l}, d, quietConfig)
		require.ErrorIs(t, err, contract.ErrConstructionRejected)
		assert.Equal(t, 1, l.Released())
		assert.Empty(t, d.Regions())
		assert.True(t, driverClosed(t, d, contract.SlotRegion{Base: l.Regions()[0].Base, SlotBytes: lenderSlotBytes, SlotCount: 1, Len: lenderSlotBytes}))
	})
	t.Run("no driver", func(t *testing.T) {
		hold := &countingHold{}
		_, err := Open(t.Context(), Loan{Regions: []contract.SlotRegion{fakeRegion(0, contract.Host)}, Hold: hold}, nil, quietConfig)
		require.ErrorIs(t, err, contract.ErrConstructionRejected)
		assert.Equal(t, 1, hold.Released())
	})
	t.Run("a registration that may be live", func(t *testing.T) {
		d := newFake(getPut)
		d.failRegistration(1, func() (contract.Registration, error) {
			return 7, &contract.RegistrationError{Registration: 7, Err: errors.New("lost the answer")}
		})
		hold := &countingHold{log: d}
		_, err := Open(t.Context(), Loan{Regions: []contract.SlotRegion{fakeRegion(0, contract.Host)}, Hold: hold}, d, quietConfig)
		var live *LiveRegistrationError
		require.ErrorAs(t, err, &live)
		assert.Zero(t, hold.Released(), "kept: the registration may be live")
		assert.NotContains(t, d.Events(), "drain true", "the driver stays open while a registration may be live")
		require.NoError(t, live.Unbind(t.Context()))
		assert.Equal(t, 1, hold.Released())
		assert.Contains(t, d.Events(), "drain true", "then Open's driver is drained and closed")
		require.NoError(t, live.Unbind(t.Context()), "again: nothing more to do")
	})
}

// A call whose access can never be proven ended: Close says so at once,
// keeps the memory and the hold, and does not close the driver.
func TestCloseOfAnUnprovableCallIsHeldForGood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLender(t, 4, contract.Host)
		b, d, store := openOver(t, l, memdrv.Options{}, quietConfig)
		store.Set(memKey(t, b, "n0"), bytes.Repeat([]byte{1}, lenderSlotBytes))
		d.UnprovableGets(memKey(t, b, "n0"))
		a, err := b.Fetch(rowsView(1), nil)
		require.NoError(t, err)
		out, err := a.Wait(t.Context())
		require.NoError(t, err, "the outcome comes long before quiescence, which never comes")
		assert.Equal(t, []contract.RowStatus{contract.Fault}, out.Rows)
		select {
		case <-a.Done():
			t.Fatal("quiesced with its access unprovable")
		default:
		}

		err = b.Close(context.Background()) // no deadline: it must answer anyway
		var held *HeldError
		require.ErrorAs(t, err, &held)
		assert.ErrorIs(t, err, ErrHeldForGood)
		assert.NotErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, []string{"attempt 1 (fetch)", "region 0"}, held.Held)
		assert.EqualValues(t, 1, held.RowsLent)
		assert.EqualValues(t, lenderSlotBytes, held.BytesLent)
		assert.Zero(t, l.Released(), "the hold is kept, and with it the memory")
		assert.Len(t, d.Regions(), 1, "still registered")
		require.ErrorIs(t, b.Close(context.Background()), ErrHeldForGood, "and again")
	})
}

// A context that runs out: Close says time ran out, and a later Close
// resumes and finishes.
func TestCloseResumesAfterTimeRanOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLender(t, 4, contract.Host)
		b, d, store := openOver(t, l, memdrv.Options{}, quietConfig)
		store.Set(memKey(t, b, "n0"), bytes.Repeat([]byte{1}, lenderSlotBytes))
		gate := d.Hold(memdrv.GetDir)
		a, err := b.Fetch(rowsView(1), nil)
		require.NoError(t, err)
		synctest.Wait()

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err = b.Close(ctx)
		var held *HeldError
		require.ErrorAs(t, err, &held)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.NotErrorIs(t, err, ErrHeldForGood)
		assert.Contains(t, held.Held, "attempt 1 (fetch)")
		assert.Zero(t, l.Released())

		out, ok := a.Outcome()
		require.True(t, ok, "Shutdown forced the outcome")
		assert.Equal(t, []contract.RowStatus{contract.Pending}, out.Rows, "no verdict came before the outcome was forced")
		assert.ErrorIs(t, out.Fault, ErrOutcomeForced)

		gate.Release()
		require.NoError(t, b.Close(context.Background()))
		assert.Equal(t, 1, l.Released())
		assert.True(t, driverClosed(t, d, l.Regions()[0]))
	})
}

// A backend made by New does not own its driver: Close leaves it open.
func TestCloseOfANewBackendLeavesTheDriver(t *testing.T) {
	l := newLender(t, 2, contract.Host)
	d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	b := memBackend(t, d, l, quietConfig)
	require.NoError(t, b.Close(t.Context()))
	assert.Equal(t, 1, l.Released())
	assert.False(t, driverClosed(t, d, l.Regions()[0]))
	require.NoError(t, d.Close())
}

func TestWaitAndKnown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLender(t, 4, contract.Host)
		b, d, store := openOver(t, l, memdrv.Options{}, quietConfig)
		store.Set(memKey(t, b, "n0"), bytes.Repeat([]byte{1}, lenderSlotBytes))
		gate := d.Hold(memdrv.GetDir)
		a, err := b.Fetch(rowsView(1), nil)
		require.NoError(t, err)
		known := a.Known()

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		out, err := a.Wait(ctx)
		require.ErrorIs(t, err, context.Canceled)
		assert.Nil(t, out.Rows)
		select {
		case <-known:
			t.Fatal("known before the verdict")
		default:
		}

		gate.Release()
		<-known
		out, err = a.Wait(ctx) // already known: the outcome wins over a done context
		require.NoError(t, err)
		assert.Equal(t, []contract.RowStatus{contract.Ready}, out.Rows)
		<-a.Known() // a second call: closed too
		<-a.Done()
		require.NoError(t, b.Close(context.Background()))
	})
}

// Every final status reaches the outcome's rows, in view order.
func TestEveryStatusReachesTheOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLender(t, 16, contract.Host)
		b, d, store := openOver(t, l, memdrv.Options{Workers: 1}, Config{Logger: quietConfig.Logger, MaxRowsPerCall: 1})
		object := bytes.Repeat([]byte{9}, lenderSlotBytes)
		store.Set(memKey(t, b, "n0"), object) // Ready
		// n1 absent: Miss
		finish := store.BeginWrite(memKey(t, b, "n2")) // NotReady
		store.Set(memKey(t, b, "n3"), object)
		n3, err := b.Key([]byte("n3")) // the hooks take keys; the backend names them
		require.NoError(t, err)
		d.FailReads(n3) // Fault, which stops the fetch: n4 and n5 end Cancelled, or Miss
		a, err := b.Fetch(rowsView(6), nil)
		require.NoError(t, err)
		out, err := a.Wait(t.Context())
		require.NoError(t, err)
		assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Miss, contract.NotReady, contract.Fault}, out.Rows[:4])
		// Every call is in the driver when Fetch returns, and the stop
		// cancels what the driver has not started: its worker may have
		// taken n4's call (even n5's) before the fault's stop reached it,
		// and then the absent key answers Miss. (Measured before this
		// was relaxed: about 1 run in 100 under -race saw n4 Miss.)
		for i, st := range out.Rows[4:] {
			assert.Contains(t, []contract.RowStatus{contract.Cancelled, contract.Miss}, st, "row n%d after the fault", 4+i)
		}
		assert.Equal(t, []bool{true, false, false, false, false, false}, out.Delivered)
		<-a.Done()

		store.SetCapacity(store.Bytes()) // full: Declined
		p, err := b.Publish(contract.View{Groups: []contract.Group{{Slots: []int32{8}, Names: [][]byte{[]byte("p0")}}}}, nil)
		require.NoError(t, err)
		out, err = p.Wait(t.Context())
		require.NoError(t, err)
		assert.Equal(t, []contract.RowStatus{contract.Declined}, out.Rows)
		finish(nil)
		require.NoError(t, b.Close(context.Background()))
	})
}

// Rows of several groups keep view order in the outcome.
func TestOutcomeRowsInViewOrder(t *testing.T) {
	l := newLender(t, 8, contract.Host, contract.Host)
	b, _, store := openOver(t, l, memdrv.Options{}, quietConfig)
	v := contract.View{}
	for g := range 2 {
		grp := contract.Group{Region: g}
		for i := range 3 {
			grp.Slots = append(grp.Slots, int32(i))
			grp.Names = append(grp.Names, fmt.Appendf(nil, "g%d-%d", g, i))
		}
		v.Groups = append(v.Groups, grp)
	}
	store.Set(memKey(t, b, "g0-0"), bytes.Repeat([]byte{1}, lenderSlotBytes))
	store.Set(memKey(t, b, "g1-0"), bytes.Repeat([]byte{1}, lenderSlotBytes))
	store.Set(memKey(t, b, "g1-1"), bytes.Repeat([]byte{1}, lenderSlotBytes))
	a, err := b.Fetch(v, nil)
	require.NoError(t, err)
	out, err := a.Wait(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Miss, contract.Miss, contract.Ready, contract.Ready, contract.Miss}, out.Rows)
	assert.Equal(t, 1, v.ResumeBound(out), "layer 0 has one block, layer 1 two: the bound is one")
	assert.Equal(t, 1, out.Prefix())
	<-a.Done()
	require.NoError(t, b.Close(t.Context()))
}
