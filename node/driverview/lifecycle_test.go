package driverview_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/node/driverview"
)

// A view's Recycle recycles the shared client: the Unprovable operations
// of every view end (with their callbacks), and the rows no worker took
// end Cancelled, another view's included. Each view then drains true.
func TestRecycleThroughAViewIsOfTheSharedClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memdrv.NewStore()
		d := memdrv.New(store, memdrv.Options{})
		a, b := newLend(t, d, "a"), newLend(t, d, "b")
		for _, k := range []string{a.key(0), b.key(0)} {
			store.Set(k, make([]byte, 64))
		}
		d.UnprovableGets(a.key(0), b.key(0))
		ua, ub := a.get(0), b.get(0)
		for _, o := range []*op{ua, ub} {
			assert.Equal(t, contract.Unprovable, settled(t, o).Access)
		}
		assert.False(t, a.v.Drain(context.Background()), "Unprovable: false at once, not at the context's end")
		assert.Equal(t, 1, b.v.Stats().Unprovable, "b's own unprovable get")

		resume := d.Pause()
		queued := b.put(1)
		callsBefore := ub.calls.Load()
		require.NoError(t, a.v.Driver().(contract.Recycler).Recycle(context.Background()))
		resume()
		synctest.Wait()
		assert.Equal(t, contract.Ended, ua.Poll(nil).Access)
		assert.Equal(t, contract.Ended, ub.Poll(nil).Access, "b's unprovable get ended too: its client is torn down")
		assert.Greater(t, ub.calls.Load(), callsBefore, "b was called back for the change")
		assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Cancelled}, Access: contract.Ended}, queued.Poll(nil),
			"b's row no worker took was cancelled by a's Recycle")
		assert.True(t, a.v.Drain(context.Background()))
		assert.True(t, b.v.Drain(context.Background()))
	})
}

// A lookup abandoned at its context's end stays the view's until the
// store answers: its Drain answers false and its Close is refused
// meanwhile, while another view drains and closes.
func TestAnAbandonedLookupStaysTheViews(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
		a, b := newLend(t, d, "a"), newLend(t, d, "b")
		gate := d.HoldLookups()
		names := [][]byte{[]byte("a-0"), []byte("a-1")}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		got, err := a.v.Driver().(contract.Looker).Lookup(ctx, contract.LookupBatch{Keys: keys, Names: names}, []contract.Presence{contract.Present})
		require.NoError(t, err)
		assert.Equal(t, []contract.Presence{contract.Unknown, contract.Unknown}, got)
		copy(names[0], "zz") // the caller's names are its own again
		assert.Equal(t, 1, a.v.Stats().Lookups)

		require.NoError(t, a.v.Unregister(a.reg))
		assert.False(t, a.v.Drain(endedCtx()), "a lookup of the view's is inside the store")
		require.ErrorIs(t, a.v.Close(), contract.ErrDriverRejected)
		assert.True(t, b.v.Drain(endedCtx()), "b has nothing inside")
		require.NoError(t, b.v.Unregister(b.reg))
		require.NoError(t, b.v.Close())

		gate.Release()
		synctest.Wait()
		assert.Zero(t, a.v.Stats().Lookups)
		assert.True(t, a.v.Drain(context.Background()))
		require.NoError(t, a.v.Close())
	})
}

// A lookup the view cannot ask about is refused with an error, whether
// its context can end or not (the view checks what the shared driver
// would, since an answer that comes after the context ended is lost).
func TestLookupRefusesBadBatches(t *testing.T) {
	for _, c := range []struct {
		name string
		b    contract.LookupBatch
		want string
	}{
		{"no key maker", contract.LookupBatch{Names: [][]byte{[]byte("x")}}, "key maker"},
		{"empty name", contract.LookupBatch{Keys: keys, Names: [][]byte{[]byte("x"), {}}}, ""},
		{"no key", contract.LookupBatch{Keys: shortKeys{}, Names: [][]byte{[]byte("x"), []byte("toolong")}}, ""},
		{"a name twice", contract.LookupBatch{Keys: keys, Names: [][]byte{[]byte("x"), []byte("y"), []byte("x")}}, ""},
	} {
		for _, ending := range []bool{false, true} {
			t.Run(c.name+map[bool]string{false: "", true: " (context can end)"}[ending], func(t *testing.T) {
				d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
				v := driverview.New(d)
				ctx := context.Background()
				if ending {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					defer cancel()
				}
				got, err := v.Driver().(contract.Looker).Lookup(ctx, c.b, nil)
				require.ErrorIs(t, err, contract.ErrDriverRejected)
				assert.ErrorContains(t, err, c.want)
				assert.Empty(t, got)
				_, asked, _ := d.Lookups()
				assert.Zero(t, asked, "nothing asked of the store")
				assert.Zero(t, v.Stats().Lookups)
			})
		}
	}
}

// shortKeys has keys for names of up to four bytes.
type shortKeys struct{}

func (shortKeys) AppendKey(dst, name []byte) []byte {
	if len(name) > 4 {
		return dst
	}
	return append(append(dst, "s/"...), name...)
}

func (shortKeys) KeyLen(n int) int {
	if n > 4 {
		return 0
	}
	return 2 + n
}

// A caller that never polls from inside onChange (or never at all)
// still drains true: the view polls its operations itself, and calls the
// caller back once more for an end no callback announced, before it
// answers. Nothing follows the true answer.
func TestACallerThatDoesNotPollStillDrains(t *testing.T) {
	for _, pollOutside := range []bool{false, true} {
		t.Run(map[bool]string{false: "never polls", true: "polls outside onChange"}[pollOutside], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
				a := newLend(t, d, "a")
				o := a.get(0, 1)
				synctest.Wait()
				if pollOutside {
					assert.Equal(t, contract.Ended, o.Poll(nil).Access)
				}
				before := o.calls.Load()
				assert.Equal(t, 1, a.v.Stats().Operations, "the end was never seen announced")
				require.True(t, a.v.Drain(context.Background()))
				assert.Equal(t, before+1, o.calls.Load(), "called back once more before the true answer")
				o.Cancel()
				synctest.Wait()
				assert.Equal(t, before+1, o.calls.Load(), "no callback after Drain answered true")
			})
		})
	}
}

// Operations a caller let end without polling from inside onChange are
// swept out as admissions go on: the view holds at most its sweep's
// floor of them, not one per call ever made.
func TestTheViewForgetsEndedOperations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
		a := newLend(t, d, "a")
		most := 0
		for range 3 * 256 {
			o := a.get(0)
			synctest.Wait()
			assert.Equal(t, contract.Ended, o.Poll(nil).Access)
			most = max(most, a.v.Stats().Operations)
		}
		assert.LessOrEqual(t, most, 256)
		assert.True(t, a.v.Drain(context.Background()))
		assert.Zero(t, a.v.Stats().Operations)
	})
}

// Over a shared driver that does not declare Cancel, a view's Drain
// cannot end its rows no worker took: it waits for them to run (false
// while they wait), never answering true early.
func TestDrainOverADriverWithoutCancelWaitsForQueuedRows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := memdrv.New(memdrv.NewStore(), memdrv.Options{NoCancel: true})
		a := newLend(t, d, "a")
		resume := d.Pause()
		o := a.put(0)
		synctest.Wait()
		assert.False(t, a.v.Drain(endedCtx()))
		assert.Equal(t, contract.Open, o.Poll(nil).Access)
		resume()
		assert.True(t, a.v.Drain(context.Background()))
		assert.Equal(t, []contract.RowStatus{contract.Ready}, o.Poll(nil).Rows)
	})
}

// A registration that failed and may be live is the view's: its handle
// unregisters through the view, and Close waits for that.
func TestARegistrationThatMayBeLiveIsTheViews(t *testing.T) {
	d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	mem, err := memdrv.Alloc(64, 2, contract.Host)
	require.NoError(t, err)
	v := driverview.New(d)
	d.FailNextRegister(&contract.RegistrationError{Registration: 1, Err: errLostAnswer})
	_, err = v.Register(mem.Region)
	var re *contract.RegistrationError
	require.ErrorAs(t, err, &re)
	require.True(t, re.MayBeLive())
	assert.Equal(t, 1, v.Stats().Registrations)
	require.True(t, v.Drain(context.Background()))
	require.ErrorIs(t, v.Close(), contract.ErrDriverRejected, "a registration that may be live is not revoked")
	require.NoError(t, v.Unregister(re.Registration))
	require.NoError(t, v.Close())
	require.NoError(t, mem.Free())
}

// A shared driver that breaks the rules in a way that may leave work the
// view cannot follow (a panic inside Put, an error from Put that does not
// certify nothing escaped, a registration with neither a handle nor an
// error) breaks the view: it never drains true or closes. A panic reaches
// the caller, which the binding contains.
func TestASharedDriverBreakingTheRulesBreaksTheView(t *testing.T) {
	b := func(mem *memdrv.Memory) contract.RowBatch {
		return contract.RowBatch{Keys: keys, Rows: []contract.Row{{Name: []byte("p"), Spans: []contract.Span{mem.Region.Slot(0)}}}}
	}
	for _, c := range []struct {
		name   string
		shared func(contract.Driver) contract.Driver
		act    func(t *testing.T, v *driverview.View, mem *memdrv.Memory)
		want   string
	}{
		{"put panics", func(d contract.Driver) contract.Driver { return panicky{bare{d}} },
			func(t *testing.T, v *driverview.View, mem *memdrv.Memory) {
				assert.Panics(t, func() { _, _ = v.Put(b(mem), nil) })
			}, "put panicked"},
		{"put errs without ErrDriverRejected", func(d contract.Driver) contract.Driver { return erring{bare{d}} },
			func(t *testing.T, v *driverview.View, mem *memdrv.Memory) {
				_, err := v.Put(b(mem), nil)
				require.ErrorIs(t, err, errLostAnswer)
			}, "does not wrap ErrDriverRejected"},
		{"register returns no handle", func(d contract.Driver) contract.Driver { return handleless{bare{d}, new(atomic.Int32)} },
			func(t *testing.T, v *driverview.View, mem *memdrv.Memory) {
				h, err := v.Register(mem.Region)
				require.NoError(t, err)
				require.Zero(t, h)
			}, "no handle and no error"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
			mem, err := memdrv.Alloc(64, 2, contract.Host)
			require.NoError(t, err)
			v := driverview.New(c.shared(d))
			reg, err := v.Register(mem.Region)
			require.NoError(t, err)
			if c.name == "register returns no handle" {
				require.NoError(t, v.Unregister(reg))
			}
			c.act(t, v, mem)
			assert.False(t, v.Drain(context.Background()))
			assert.ErrorContains(t, v.Close(), c.want)
		})
	}
}

type panicky struct{ bare }

func (panicky) Put(contract.RowBatch, func()) (contract.Operation, error) { panic("lost the store") }

type erring struct{ bare }

func (erring) Put(contract.RowBatch, func()) (contract.Operation, error) { return nil, errLostAnswer }

// handleless answers its second registration with neither a handle nor an error.
type handleless struct {
	bare
	calls *atomic.Int32
}

func (h handleless) Register(r contract.SlotRegion) (contract.Registration, error) {
	if h.calls.Add(1) == 2 {
		return 0, nil
	}
	return h.bare.Register(r)
}

// Views drained and closed one after another while others work, from
// many goroutines (run with -race): every view drains true once its own
// work ended, closes, and the shared driver drains and closes last.
func TestManyViewsComeAndGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := memdrv.New(memdrv.NewStore(), memdrv.Options{Workers: 4})
		var closed atomic.Int32
		for w := range 8 {
			go func() {
				l := newLend(t, d, string(rune('a'+w)))
				for i := range 4 {
					l.put(i % 8)
					l.get((i + 1) % 8)
				}
				if !l.v.Drain(context.Background()) {
					t.Errorf("view %d did not drain", w)
					return
				}
				if err := l.v.Unregister(l.reg); err != nil {
					t.Errorf("view %d: %v", w, err)
					return
				}
				if err := l.v.Close(); err != nil {
					t.Errorf("view %d: %v", w, err)
					return
				}
				closed.Add(1)
			}()
		}
		synctest.Wait()
		assert.EqualValues(t, 8, closed.Load())
		assert.True(t, d.Drain(context.Background()))
		require.NoError(t, d.Close())
	})
}
