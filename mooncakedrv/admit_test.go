package mooncakedrv

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
	"github.com/kvshare/kvshare/rowbatch"
)

// nulKeys is a key maker that breaks the contract: its keys hold a NUL.
type nulKeys struct{}

func (nulKeys) KeyLen(n int) int                  { return n + 2 }
func (nulKeys) AppendKey(dst, name []byte) []byte { return append(append(dst, 'k', 0), name...) }

// nulFor is the stem's key maker but for one name, whose key gets a NUL
// in place of its first byte (the same length: KeyLen stays exact).
type nulFor struct {
	keys.Stem
	name string
}

func (k nulFor) AppendKey(dst, name []byte) []byte {
	n := len(dst)
	dst = k.Stem.AppendKey(dst, name)
	if string(name) == k.name {
		dst[n] = 0
	}
	return dst
}

// Every admission refusal wraps ErrDriverRejected, records nothing and
// reaches no store.
func TestAdmissionRefusals(t *testing.T) {
	cases := []struct {
		name  string
		batch func(r *rig) contract.RowBatch
		hint  contract.Hint
		prep  func(r *rig)
		want  string
	}{
		{name: "no rows", batch: func(r *rig) contract.RowBatch { return contract.RowBatch{Keys: r.stem} }, want: "no rows"},
		{name: "no key maker", batch: func(r *rig) contract.RowBatch {
			b := r.batch([]string{"a"}, 0)
			b.Keys = nil
			return b
		}, want: "no key maker"},
		{name: "a repeated name", batch: func(r *rig) contract.RowBatch { return r.batch([]string{"a", "b", "a"}, 0, 1, 2) },
			want: "name repeats row 0"},
		{name: "two spans in a row", batch: func(r *rig) contract.RowBatch {
			b := r.batch([]string{"a"}, 0)
			b.Rows[0].Spans = append(b.Rows[0].Spans, r.mem.region.Slot(1))
			return b
		}, want: "2 spans"},
		{name: "a span outside every registration", batch: func(r *rig) contract.RowBatch {
			b := r.batch([]string{"a"}, 0)
			b.Rows[0].Spans[0].Addr = r.mem.region.Base + uintptr(r.mem.region.Len)
			return b
		}, want: "no live registration"},
		{name: "a name without a key", batch: func(r *rig) contract.RowBatch {
			b := r.batch([]string{"a"}, 0)
			b.Rows[0].Name = make([]byte, 600)
			return b
		}, want: "no key for a name of 600 bytes"},
		{name: "a key with a NUL byte", batch: func(r *rig) contract.RowBatch {
			b := r.batch([]string{"a"}, 0)
			b.Keys = nulKeys{}
			return b
		}, want: "NUL"},
		{name: "a NUL in a later row's key", batch: func(r *rig) contract.RowBatch {
			b := r.batch([]string{"a", "b", "c", "bad"}, 0, 1, 2, 3)
			b.Keys = nulFor{Stem: r.stem, name: "bad"}
			return b
		}, want: "row 3: "},
		{name: "a hint", hint: "where", batch: func(r *rig) contract.RowBatch { return r.batch([]string{"a"}, 0) }, want: "hint"},
		{name: "draining", prep: func(r *rig) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			require.True(r.t, r.drv.Drain(ctx))
		}, batch: func(r *rig) contract.RowBatch { return r.batch([]string{"a"}, 0) }, want: "drained"},
	}
	for _, tc := range cases {
		for _, dir := range []contract.Direction{contract.PutDir, contract.GetDir} {
			t.Run(dir.String()+"/"+tc.name, func(t *testing.T) {
				r := newRig(t, fakesdk.Options{}, Config{})
				if tc.prep != nil {
					tc.prep(r)
				}
				var op contract.Operation
				var err error
				if dir == contract.PutDir {
					if tc.hint != nil {
						t.Skip("puts take no hint")
					}
					op, err = r.drv.Put(tc.batch(r), nil)
				} else {
					op, err = r.drv.Get(tc.batch(r), tc.hint, nil)
				}
				require.ErrorIs(t, err, contract.ErrDriverRejected)
				assert.Nil(t, op)
				assert.Contains(t, err.Error(), tc.want)
				assert.Equal(t, fakesdk.Calls{Register: 1}, r.store.Calls(), "nothing reached the store")
				s := r.drv.Stats()
				assert.Zero(t, s.Ops)
				assert.Zero(t, s.KeysWriting)
			})
		}
	}
}

func TestTheRowbatchRefusalIsWrapped(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{})
	_, err := r.drv.Put(r.batch([]string{"a", "a"}, 0, 1), nil)
	assert.ErrorIs(t, err, rowbatch.ErrBadBatch)
}

func TestRegistration(t *testing.T) {
	t.Run("device memory is refused before the store is asked", func(t *testing.T) {
		store := fakesdk.New(fakesdk.Options{})
		d, err := New(store.Client(), Config{})
		require.NoError(t, err)
		m := newMemory(t, 1, slotBytes)
		dev := m.region
		dev.Kind = contract.Device
		_, err = d.Register(dev)
		require.ErrorIs(t, err, contract.ErrDriverRejected)
		assert.Contains(t, err.Error(), "device memory and the driver does not declare DeviceMemory")
		_, err = d.Register(contract.SlotRegion{Kind: contract.Host})
		require.ErrorIs(t, err, contract.ErrDriverRejected)
		require.ErrorIs(t, err, contract.ErrInvalidRegion)
		assert.Zero(t, store.Calls().Register)
	})
	t.Run("the store refuses the buffer", func(t *testing.T) {
		store := fakesdk.New(fakesdk.Options{})
		require.NoError(t, store.Script(fakesdk.Fault{Op: fakesdk.Register, Code: mooncakesdk.InvalidParams}))
		d, err := New(store.Client(), Config{})
		require.NoError(t, err)
		_, err = d.Register(newMemory(t, 1, slotBytes).region)
		require.ErrorIs(t, err, contract.ErrDriverRejected)
		var re *contract.RegistrationError
		assert.False(t, errorsAs(err, &re), "a refusal certifies nothing is registered")
	})
	t.Run("a panic may have registered: a handle to revoke", func(t *testing.T) {
		store := fakesdk.New(fakesdk.Options{})
		require.NoError(t, store.Script(fakesdk.Fault{Op: fakesdk.Register, Panic: true, Phase: fakesdk.AfterLanding, Times: 1}))
		d, err := New(store.Client(), Config{})
		require.NoError(t, err)
		_, err = d.Register(newMemory(t, 1, slotBytes).region)
		var re *contract.RegistrationError
		require.True(t, errorsAs(err, &re))
		require.True(t, re.MayBeLive())
		require.NoError(t, d.Unregister(re.Registration))
		assert.Equal(t, 1, store.Calls().Unregister)
	})
	t.Run("an unregister the store refuses keeps the region", func(t *testing.T) {
		r := newRig(t, fakesdk.Options{}, Config{})
		script(r, fakesdk.Fault{Op: fakesdk.Unregister, Code: mooncakesdk.InvalidParams, Times: 1})
		require.ErrorIs(t, r.drv.Unregister(r.reg), contract.ErrDriverRejected)
		r.mem.fill(0, 1)
		assert.Equal(t, []contract.RowStatus{contract.Ready}, r.put([]string{"a"}, 0).Rows, "still live")
		r.close()
	})
	t.Run("handles", func(t *testing.T) {
		r := newRig(t, fakesdk.Options{}, Config{})
		assert.ErrorIs(t, r.drv.Unregister(99), contract.ErrDriverRejected, "never issued")
		require.NoError(t, r.drv.Unregister(r.reg))
		assert.NoError(t, r.drv.Unregister(r.reg), "already revoked")
		_, err := r.drv.Put(r.batch([]string{"a"}, 0), nil)
		assert.ErrorIs(t, err, contract.ErrDriverRejected, "its region is no longer live")
	})
}

func TestNewRefusesABadConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"workers":        {Workers: -1},
		"rows per call":  {RowsPerCall: -1},
		"bytes per call": {BytesPerCall: -1},
	} {
		_, err := New(fakesdk.New(fakesdk.Options{}).Client(), cfg)
		assert.ErrorIs(t, err, ErrConfig, name)
	}
	_, err := New(nil, Config{})
	assert.ErrorIs(t, err, ErrConfig)
}

// hookKeys is the stem's key maker with a hook run as the first key is
// built: admission builds keys outside the driver's lock, so the hook
// changes the driver in the middle of an admission.
type hookKeys struct {
	keys.Stem
	once sync.Once
	hook func()
}

func (k *hookKeys) AppendKey(dst, name []byte) []byte {
	k.once.Do(k.hook)
	return k.Stem.AppendKey(dst, name)
}

// What changes while an admission builds its keys is checked again
// before anything is recorded: a region unregistered meanwhile, or a
// Drain, refuses the batch; a region registered meanwhile leaves it
// admitted.
func TestAdmissionChecksAgainWhatChangedMeanwhile(t *testing.T) {
	cases := []struct {
		name  string
		hook  func(r *rig)
		admit bool
		want  string
	}{
		{name: "the batch's region unregistered", hook: func(r *rig) {
			require.NoError(r.t, r.drv.Unregister(r.reg))
		}, want: "no live registration"},
		{name: "drained", hook: func(r *rig) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			require.True(r.t, r.drv.Drain(ctx))
		}, want: "drained"},
		{name: "another region registered", hook: func(r *rig) {
			_, err := r.drv.Register(newMemory(r.t, 1, slotBytes).region)
			require.NoError(r.t, err)
		}, admit: true},
	}
	for _, tc := range cases {
		for _, dir := range []contract.Direction{contract.PutDir, contract.GetDir} {
			t.Run(dir.String()+"/"+tc.name, func(t *testing.T) {
				r := newRig(t, fakesdk.Options{}, Config{})
				b := r.batch([]string{"a", "b"}, 0, 1)
				b.Keys = &hookKeys{Stem: r.stem, hook: func() { tc.hook(r) }}
				f, ch := notify()
				var op contract.Operation
				var err error
				if dir == contract.PutDir {
					op, err = r.drv.Put(b, f)
				} else {
					op, err = r.drv.Get(b, nil, f)
				}
				if tc.admit {
					require.NoError(t, err)
					st := settle(t, op, ch)
					assert.Equal(t, contract.Ended, st.Access)
					assert.EqualValues(t, 1, r.drv.Stats().Ops)
					return
				}
				require.ErrorIs(t, err, contract.ErrDriverRejected)
				assert.Nil(t, op)
				assert.Contains(t, err.Error(), tc.want)
				calls := r.store.Calls()
				assert.Zero(t, calls.Put+calls.Get+calls.Exist, "nothing reached the store")
				s := r.drv.Stats()
				assert.Zero(t, s.Ops)
				assert.Zero(t, s.KeysWriting)
			})
		}
	}
}

// Gets go first: with one worker busy, a get admitted after a put still
// runs before it. Every admitted operation is counted.
func TestAGetOvertakesAQueuedPut(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{Workers: 1})
	gate := fakesdk.NewGate()
	script(r, fakesdk.Fault{Op: fakesdk.Get, Key: r.key("blocker"), Hold: gate, Times: 1})
	var mu sync.Mutex
	var order []string
	ended := func(name string) (func(), <-chan struct{}) {
		f, ch := notify()
		return func() {
			mu.Lock()
			if !slices.Contains(order, name) {
				order = append(order, name)
			}
			mu.Unlock()
			f()
		}, ch
	}
	fb, chb := ended("blocker")
	blocker, err := r.drv.Get(r.batch([]string{"blocker"}, 0), nil, fb)
	require.NoError(t, err)
	<-gate.Reached() // the one worker is inside the SDK
	fp, chp := ended("put")
	put, err := r.drv.Put(r.batch([]string{"p"}, 1), fp)
	require.NoError(t, err)
	fg, chg := ended("get")
	get, err := r.drv.Get(r.batch([]string{"g"}, 2), nil, fg)
	require.NoError(t, err)
	gate.Open()
	settle(t, blocker, chb)
	settle(t, put, chp)
	settle(t, get, chg)
	mu.Lock()
	assert.Equal(t, []string{"blocker", "get", "put"}, order)
	mu.Unlock()
	assert.EqualValues(t, 3, r.drv.Stats().Ops)
	r.close()
}

// A row makes busy only the region its span overlaps: a region that
// merely touches the span, before or after it, stays free to unregister.
func TestUnregisterARegionAdjacentToABusyOne(t *testing.T) {
	for _, rowInLow := range []bool{true, false} {
		t.Run(fmt.Sprintf("row in the lower region=%v", rowInLow), func(t *testing.T) {
			store := fakesdk.New(fakesdk.Options{})
			d, err := New(store.Client(), Config{Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			mem := newMemory(t, 4, slotBytes)
			low, high := mem.region, mem.region
			low.SlotCount, low.Len = 2, 2*slotBytes
			high.Base, high.SlotCount, high.Len = mem.region.Base+2*slotBytes, 2, 2*slotBytes
			lowReg, err := d.Register(low)
			require.NoError(t, err)
			highReg, err := d.Register(high)
			require.NoError(t, err)
			busyReg, freeReg, span := lowReg, highReg, low.Slot(1) // ends where high begins
			if !rowInLow {
				busyReg, freeReg, span = highReg, lowReg, high.Slot(0) // begins where low ends
			}
			stem, err := keys.NewStem("t")
			require.NoError(t, err)
			gate := fakesdk.NewGate()
			require.NoError(t, store.Script(fakesdk.Fault{Op: fakesdk.Get, Hold: gate, Times: 1}))
			f, ch := notify()
			op, err := d.Get(contract.RowBatch{Keys: stem, Rows: []contract.Row{{Name: []byte("k"), Spans: []contract.Span{span}}}}, nil, f)
			require.NoError(t, err)
			<-gate.Reached()

			assert.NoError(t, d.Unregister(freeReg), "the adjacent region is free")
			assert.ErrorIs(t, d.Unregister(busyReg), ErrRegionBusy)

			gate.Open()
			settle(t, op, ch)
			require.NoError(t, d.Unregister(busyReg))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			require.True(t, d.Drain(ctx))
			require.NoError(t, d.Close())
		})
	}
}
