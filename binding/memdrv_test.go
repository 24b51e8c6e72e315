package binding

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

func TestRoundTripOverMemdrv(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memdrv.NewStore()
		srcDrv := memdrv.New(store, memdrv.Options{MaxRowsPerOp: 3})
		dstDrv := memdrv.New(store, memdrv.Options{Workers: 1})
		src := newLender(t, 16, contract.Host, contract.Host)
		dst := newLender(t, 16, contract.Host, contract.Host)
		pub := memBackend(t, srcDrv, src, Config{})
		fet := memBackend(t, dstDrv, dst, Config{MaxRowsPerCall: 4})

		// two groups: region 0 slots 0..6, region 1 slots 3..5
		var pv, fv contract.View
		pv.Groups = []contract.Group{{Region: 0}, {Region: 1}}
		fv.Groups = []contract.Group{{Region: 1}, {Region: 0}}
		for i := range 7 {
			src.fill(0, i, byte(i))
			name := fmt.Appendf(nil, "a%d", i)
			pv.Groups[0].Slots = append(pv.Groups[0].Slots, int32(i))
			pv.Groups[0].Names = append(pv.Groups[0].Names, name)
			fv.Groups[0].Slots = append(fv.Groups[0].Slots, int32(15-i))
			fv.Groups[0].Names = append(fv.Groups[0].Names, name)
		}
		for i := 3; i < 6; i++ {
			src.fill(1, i, byte(100+i))
			name := fmt.Appendf(nil, "b%d", i)
			pv.Groups[1].Slots = append(pv.Groups[1].Slots, int32(i))
			pv.Groups[1].Names = append(pv.Groups[1].Names, name)
			fv.Groups[1].Slots = append(fv.Groups[1].Slots, int32(i-3))
			fv.Groups[1].Names = append(fv.Groups[1].Names, name)
		}
		a, err := pub.Publish(pv, nil)
		require.NoError(t, err)
		<-a.Done()
		out, _ := a.Outcome()
		require.Equal(t, 10, out.Prefix())
		require.NoError(t, out.Fault)
		assert.Equal(t, 4, srcDrv.Admitted(memdrv.PutDir), "3+3+1 rows, then 3")

		f, err := fet.Fetch(fv, nil)
		require.NoError(t, err)
		<-f.Done()
		out, _ = f.Outcome()
		require.Equal(t, 10, out.Prefix())
		assert.Equal(t, 3, dstDrv.Admitted(memdrv.GetDir), "4+3 rows, then 3")
		for i := range 7 {
			assert.Equal(t, src.mems[0].Slot(i), dst.mems[1].Slot(15-i), "a%d", i)
		}
		for i := 3; i < 6; i++ {
			assert.Equal(t, src.mems[1].Slot(i), dst.mems[0].Slot(i-3), "b%d", i)
		}

		for _, b := range []*Backend{pub, fet} {
			assert.Nil(t, b.Shutdown(context.Background()))
			<-b.Closed()
		}
		require.NoError(t, srcDrv.Close())
		require.NoError(t, dstDrv.Close())
		assert.Equal(t, 1, src.Released())
		assert.Equal(t, 1, dst.Released())
	})
}

func TestDeviceRegionsNeedDeviceMemory(t *testing.T) {
	for _, device := range []bool{false, true} {
		t.Run(fmt.Sprintf("device=%v", device), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := memdrv.New(memdrv.NewStore(), memdrv.Options{DeviceMemory: device})
				l := newLender(t, 4, contract.Host, contract.Device)
				b := memBackend(t, d, l, Config{})
				assert.Equal(t, device, b.Regions().Served(1))
				assert.Len(t, d.Regions(), map[bool]int{false: 1, true: 2}[device])
				l.fill(1, 0, 7)
				v := contract.View{Groups: []contract.Group{{Region: 1, Slots: []int32{0}, Names: [][]byte{[]byte("d")}}}}
				a, err := b.Publish(v, nil)
				if !device {
					require.ErrorIs(t, err, contract.ErrInvalidSubmission)
					return
				}
				require.NoError(t, err)
				<-a.Done()
				out, _ := a.Outcome()
				assert.Equal(t, 1, out.Prefix())
			})
		})
	}
}

func TestVerdictsOverMemdrv(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memdrv.NewStore()
		d := memdrv.New(store, memdrv.Options{Workers: 1})
		l := newLender(t, 16, contract.Host)
		b := memBackend(t, d, l, Config{MaxRowsPerCall: 2})
		object := bytes.Repeat([]byte{9}, lenderSlotBytes)
		store.Set(memKey(t, b, "n0"), object)
		finish := store.BeginWrite(memKey(t, b, "n1")) // NotReady
		store.Set(memKey(t, b, "n3"), object)
		// n2 absent: Miss

		a, err := b.Fetch(rowsView(4), nil)
		require.NoError(t, err)
		<-a.Done()
		out, _ := a.Outcome()
		assert.Equal(t, []bool{true, false, false, true}, out.Delivered)
		assert.NoError(t, out.Fault, "not ready and miss are no faults")
		assert.Equal(t, object, l.mems[0].Slot(0))
		assert.Equal(t, object, l.mems[0].Slot(3))

		// a publish of a key being written is NotReady; one past capacity Declined
		store.SetCapacity(store.Bytes() + lenderSlotBytes)
		for i := range 4 {
			l.fill(0, 4+i, byte(i))
		}
		pv := contract.View{Groups: []contract.Group{{Slots: []int32{4, 5, 6}, Names: [][]byte{[]byte("n1"), []byte("p1"), []byte("p2")}}}}
		p, err := b.Publish(pv, nil)
		require.NoError(t, err)
		<-p.Done()
		out, _ = p.Outcome()
		assert.Equal(t, []bool{false, true, false}, out.Delivered)
		assert.NoError(t, out.Fault)
		st := b.Stats()
		assert.EqualValues(t, 3, st.Rows[contract.Ready])
		assert.EqualValues(t, 2, st.Rows[contract.NotReady])
		assert.EqualValues(t, 1, st.Rows[contract.Miss])
		assert.EqualValues(t, 1, st.Rows[contract.Declined])
		finish(nil)

		assert.Nil(t, b.Shutdown(context.Background()))
		require.NoError(t, d.Close())
	})
}

func TestFaultsOverMemdrv(t *testing.T) {
	t.Run("failed read", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			store := memdrv.NewStore()
			d := memdrv.New(store, memdrv.Options{Workers: 1})
			l := newLender(t, 16, contract.Host)
			b := memBackend(t, d, l, Config{MaxRowsPerCall: 1})
			for i := range 4 {
				store.Set(memKey(t, b, fmt.Sprintf("n%d", i)), bytes.Repeat([]byte{byte(i)}, lenderSlotBytes))
			}
			d.FailReads(memKey(t, b, "n2"))
			a, err := b.Fetch(rowsView(4), nil)
			require.NoError(t, err)
			<-a.Done()
			out, _ := a.Outcome()
			assert.Equal(t, 2, out.Prefix())
			require.ErrorIs(t, out.Fault, ErrRowFault)
			assert.ErrorContains(t, out.Fault, "group 0 row 2")
			assert.Nil(t, b.Shutdown(context.Background()))
		})
	})
	t.Run("crash", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			d := memdrv.New(memdrv.NewStore(), memdrv.Options{Logger: slog.New(slog.DiscardHandler)})
			l := newLender(t, 16, contract.Host)
			b := memBackend(t, d, l, Config{})
			d.Crash(memdrv.PutDir)
			a, err := b.Publish(rowsView(3), nil)
			require.NoError(t, err)
			<-a.Done()
			out, _ := a.Outcome()
			assert.Equal(t, []bool{false, false, false}, out.Delivered)
			require.ErrorIs(t, out.Fault, ErrRowFault)
			assert.EqualValues(t, 3, b.Stats().Rows[contract.Fault])
			assert.Nil(t, b.Shutdown(context.Background()), "a crash ends access: nothing is kept")
			require.NoError(t, d.Close())
		})
	})
	t.Run("refused after the driver drained", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
			l := newLender(t, 16, contract.Host)
			b := memBackend(t, d, l, Config{MaxRowsPerCall: 2})
			require.True(t, d.Drain(context.Background()))
			a, err := b.Fetch(rowsView(4), nil)
			require.NoError(t, err)
			out, ok := a.Outcome()
			require.True(t, ok)
			require.ErrorIs(t, out.Fault, contract.ErrDriverRejected)
			assert.True(t, a.Quiesced())
			assert.Zero(t, d.Admitted(memdrv.GetDir), "nothing was admitted")
			assert.Nil(t, b.Shutdown(context.Background()))
			require.NoError(t, d.Close())
		})
	})
}

func TestUnprovableGetOverMemdrv(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memdrv.NewStore()
		d := memdrv.New(store, memdrv.Options{})
		l := newLender(t, 16, contract.Host, contract.Host)
		b := memBackend(t, d, l, Config{MaxRowsPerCall: 2})
		for i := range 4 {
			store.Set(memKey(t, b, fmt.Sprintf("n%d", i)), bytes.Repeat([]byte{1}, lenderSlotBytes))
		}
		d.UnprovableGets(memKey(t, b, "n3"))
		a, err := b.Fetch(rowsView(4), nil)
		require.NoError(t, err)
		synctest.Wait()
		out, ok := a.Outcome()
		require.True(t, ok)
		assert.Equal(t, 3, out.Prefix())
		assert.False(t, a.Quiesced())
		st := b.Stats()
		assert.EqualValues(t, 1, st.CallsUnprovable)
		assert.EqualValues(t, 2, st.RowsLent)
		assert.Equal(t, 1, d.Unprovable())

		labels := b.Shutdown(context.Background())
		assert.Equal(t, []string{"attempt 1 (fetch)", "region 0", "region 1"}, labels, "returns at once: nothing can change")
		synctest.Wait()
		assert.Zero(t, l.Released())
		assert.Len(t, d.Regions(), 2, "never unregistered")
		select {
		case <-b.Closed():
			t.Fatal("closed while a store may touch the slots")
		default:
		}
	})
}

func TestShutdownOverAHeldGet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memdrv.NewStore()
		d := memdrv.New(store, memdrv.Options{Workers: 1})
		l := newLender(t, 16, contract.Host)
		var woke atomic.Int32
		b := memBackend(t, d, l, Config{Wake: func() { woke.Add(1) }})
		store.Set(memKey(t, b, "n0"), bytes.Repeat([]byte{5}, lenderSlotBytes))
		gate := d.Hold(memdrv.GetDir)
		a, err := b.Fetch(rowsView(1), nil)
		require.NoError(t, err)
		require.NoError(t, gate.Held(context.Background()))

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		labels := b.Shutdown(ctx)
		assert.Equal(t, []string{"attempt 1 (fetch)", "region 0"}, labels)
		out, ok := a.Outcome()
		require.True(t, ok, "the outcome was forced")
		require.ErrorIs(t, out.Fault, ErrOutcomeForced)
		assert.Equal(t, 0, out.Prefix())
		assert.EqualValues(t, 1, woke.Load())
		assert.False(t, a.Quiesced(), "the held row may still write the slot")
		assert.Zero(t, l.Released())
		_, err = b.Fetch(rowsView(1), nil)
		require.ErrorIs(t, err, contract.ErrSubmissionRejected)

		gate.Release()
		<-a.Done()
		out, _ = a.Outcome()
		assert.Equal(t, 0, out.Prefix(), "a forced outcome never changes")
		assert.EqualValues(t, 1, b.Stats().Rows[contract.Ready], "the row's verdict is still counted")
		<-b.Closed()
		assert.Nil(t, b.Shutdown(context.Background()))
		assert.Equal(t, 1, l.Released())
		assert.Empty(t, d.Regions())
		require.NoError(t, d.Close(), "the owner closes the driver last")
	})
}

func TestCancelOverMemdrv(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
		l := newLender(t, 16, contract.Host)
		b := memBackend(t, d, l, Config{MaxRowsPerCall: 2})
		resume := d.Pause()
		a, err := b.Publish(rowsView(4), nil)
		require.NoError(t, err)
		a.Cancel()
		resume()
		<-a.Done()
		out, _ := a.Outcome()
		assert.Equal(t, 0, out.Prefix())
		assert.NoError(t, out.Fault)
		assert.EqualValues(t, 4, b.Stats().Rows[contract.Cancelled])
		assert.Zero(t, d.Admitted(memdrv.GetDir))
		assert.Nil(t, b.Shutdown(context.Background()))
	})
}

func TestBindOverMemdrv(t *testing.T) {
	t.Run("refused registration rolls back", func(t *testing.T) {
		d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
		l := newLender(t, 4, contract.Host, contract.Host)
		d.FailNextRegister(fmt.Errorf("%w: staged", contract.ErrDriverRejected))
		_, err := Bind(d, l.Regions(), l)
		require.ErrorIs(t, err, contract.ErrConstructionRejected)
		assert.Empty(t, d.Regions())
		assert.Equal(t, 1, l.Released())
	})
	t.Run("possibly live registration keeps the hold", func(t *testing.T) {
		d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
		l := newLender(t, 4, contract.Host, contract.Host)
		d.FailNextRegister(&contract.RegistrationError{Registration: 1, Err: errors.New("staged")})
		_, err := Bind(d, l.Regions(), l)
		var live *LiveRegistrationError
		require.ErrorAs(t, err, &live)
		assert.Equal(t, []string{"region 0"}, live.Held)
		assert.Len(t, d.Regions(), 1)
		assert.Zero(t, l.Released())
		require.NoError(t, live.Unbind(context.Background()))
		assert.Empty(t, d.Regions())
		assert.Equal(t, 1, l.Released())
	})
	for _, liveHandle := range []bool{false, true} {
		t.Run(fmt.Sprintf("together, failed, live=%v", liveHandle), func(t *testing.T) {
			d := memdrv.NewTogether(memdrv.NewStore(), memdrv.Options{})
			l := newLender(t, 4, contract.Host, contract.Host)
			d.FailNextRegistration(liveHandle)
			_, err := Bind(d, l.Regions(), l)
			require.ErrorIs(t, err, memdrv.ErrStagedFailure)
			if !liveHandle {
				require.ErrorIs(t, err, contract.ErrConstructionRejected)
				assert.Equal(t, 1, l.Released())
				assert.Empty(t, d.Regions())
				return
			}
			var live *LiveRegistrationError
			require.ErrorAs(t, err, &live)
			assert.Zero(t, l.Released())
			assert.Len(t, d.Regions(), 2)
			require.NoError(t, live.Unbind(context.Background()))
			assert.Empty(t, d.Regions())
			assert.Equal(t, 1, l.Released())
		})
	}
	t.Run("together, round trip and shutdown", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			d := memdrv.NewTogether(memdrv.NewStore(), memdrv.Options{})
			l := newLender(t, 4, contract.Host, contract.Host)
			b := memBackend(t, d, l, Config{})
			a, err := b.Publish(rowsView(2), nil)
			require.NoError(t, err)
			<-a.Done()
			assert.Nil(t, b.Shutdown(context.Background()))
			assert.Empty(t, d.Regions())
			require.NoError(t, d.Close())
		})
	})
}

func TestUnbindRetriesWhileAGetIsHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
		l := newLender(t, 4, contract.Host)
		r, err := Bind(d, l.Regions(), l)
		require.NoError(t, err)
		gate := d.Hold(memdrv.GetDir)
		region, _ := r.Region(0)
		_, err = d.Get(contract.RowBatch{Keys: mustStem(t, "t"), Rows: []contract.Row{{Name: []byte("k"), Spans: []contract.Span{region.Slot(0)}}}}, nil, nil)
		require.NoError(t, err)
		require.NoError(t, gate.Held(context.Background()))

		done := make(chan error)
		go func() { done <- r.Unbind(context.Background()) }()
		time.Sleep(time.Minute) // fake time: a minute of refusals
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Unbind returned while the region was busy: %v", err)
		default:
		}
		assert.Zero(t, l.Released())
		assert.Equal(t, []string{"region 0"}, r.Held())

		gate.Release()
		require.NoError(t, <-done)
		assert.Equal(t, 1, l.Released())
		assert.Empty(t, d.Regions())
	})
}

// Many submitters, cancels and stats readers at once over a real
// concurrent driver: every row is accounted for once, every attempt
// quiesces, and the hold goes once, after all of it.
func TestConcurrentSubmissionsOverMemdrv(t *testing.T) {
	store := memdrv.NewStore()
	d := memdrv.New(store, memdrv.Options{Workers: 2, MaxRowsPerOp: 3})
	l := newLender(t, 64, contract.Host)
	b := memBackend(t, d, l, Config{MaxBytesPerCall: 5 * lenderSlotBytes})
	const submitters, perSubmitter, rows = 4, 20, 8
	var wg sync.WaitGroup
	attempts := make(chan contract.Attempt, submitters*perSubmitter)
	for s := range submitters {
		wg.Go(func() {
			for i := range perSubmitter {
				g := contract.Group{Slots: make([]int32, rows), Names: make([][]byte, rows)}
				for r := range rows {
					g.Slots[r] = int32(s*rows + r) // each submitter its own slots
					g.Names[r] = fmt.Appendf(nil, "k%d", (i+r)%12)
				}
				v := contract.View{Groups: []contract.Group{g}}
				var a contract.Attempt
				var err error
				if i%2 == 0 {
					a, err = b.Publish(v, nil)
				} else {
					a, err = b.Fetch(v, nil)
				}
				if !assert.NoError(t, err) {
					return
				}
				if i%5 == 0 {
					a.Cancel()
				}
				_ = b.Stats()
				<-a.Done() // the slots are reused by the next submission
				attempts <- a
			}
		})
	}
	wg.Wait()
	close(attempts)
	n := 0
	for a := range attempts {
		out, ok := a.Outcome()
		require.True(t, ok)
		require.Len(t, out.Delivered, rows)
		n++
	}
	require.Equal(t, submitters*perSubmitter, n)
	st := b.Stats()
	var total int64
	for _, c := range st.Rows {
		total += c
	}
	assert.EqualValues(t, submitters*perSubmitter*rows, total, "every row counted once")
	assert.Zero(t, st.RowsLent)
	assert.Zero(t, st.AttemptsOpen)
	assert.Nil(t, b.Shutdown(context.Background()))
	assert.Equal(t, 1, l.Released())
	require.NoError(t, d.Close())
}
