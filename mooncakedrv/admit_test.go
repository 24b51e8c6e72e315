package mooncakedrv

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
	"github.com/kvshare/kvshare/rowbatch"
)

// nulKeys is a key maker that breaks the contract: its keys hold a NUL.
type nulKeys struct{}

func (nulKeys) KeyLen(n int) int                  { return n + 2 }
func (nulKeys) AppendKey(dst, name []byte) []byte { return append(append(dst, 'k', 0), name...) }

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
		assert.Contains(t, err.Error(), "host memory only")
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
