package binding

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/storeconfig"
)

// llamaScope is the scope of the tests: one fp16 engine on one GPU.
var llamaScope = keys.Scope{Model: "meta-llama/Llama-3.1-8B-Instruct", Revision: "0e9e39f2", KVDType: "fp16",
	TokensPerBlock: 16, KVHeads: 8, HeadDim: 128, Layers: 32, TPSize: 1, PPSize: 1, HashAlgorithm: "sha256-cbor"}

// scopeView is a view of rows r0..r{n-1} in region 0, slots 0..n-1.
func scopeView(n int) contract.View {
	g := contract.Group{Region: 0}
	for i := range n {
		g.Slots = append(g.Slots, int32(i))
		g.Names = append(g.Names, fmt.Appendf(nil, "r%d", i))
	}
	return contract.View{Groups: []contract.Group{g}}
}

// Backends over one store share rows only under the same scope: any
// field differing (or no scope against a scope) and every row is Absent
// to a lookup, and a fetch delivers nothing and writes nothing.
func TestBackendsShareRowsOnlyUnderTheSameScope(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memdrv.NewStore()
		const rows = 4
		src := newLender(t, rows, contract.Host)
		srcDrv := memdrv.New(store, memdrv.Options{})
		pub := memBackend(t, srcDrv, src, Config{KeyPrefix: "kv", Scope: llamaScope})
		for i := range rows {
			src.fill(0, i, byte(10*i+1))
		}
		a, err := pub.Publish(scopeView(rows), nil)
		require.NoError(t, err)
		<-a.Done()
		out, _ := a.Outcome()
		require.Equal(t, rows, out.Prefix())

		fp8, tenant, revision, tp := llamaScope, llamaScope, llamaScope, llamaScope
		fp8.KVDType = "fp8_e4m3"
		tenant.Tenant = "acme"
		revision.Revision = "5f0b02c7"
		tp.TPRank, tp.TPSize = 1, 2
		for _, tc := range []struct {
			name  string
			scope keys.Scope
			finds bool
		}{
			{"the same scope", llamaScope, true},
			{"another kv_dtype", fp8, false},
			{"another tenant", tenant, false},
			{"another revision", revision, false},
			{"another layout", tp, false},
			{"no scope", keys.Scope{}, false},
		} {
			dst := newLender(t, rows, contract.Host)
			drv := memdrv.New(store, memdrv.Options{})
			b := memBackend(t, drv, dst, Config{KeyPrefix: "kv", Scope: tc.scope})

			res, err := b.Lookup(t.Context(), scopeView(rows), LookupOptions{Every: true})
			require.NoError(t, err, tc.name)
			want := contract.Absent
			if tc.finds {
				want = contract.Present
			}
			for i, p := range res.Rows {
				assert.Equal(t, want, p, "%s: row %d", tc.name, i)
			}

			f, err := b.Fetch(scopeView(rows), nil)
			require.NoError(t, err, tc.name)
			<-f.Done()
			out, _ := f.Outcome()
			for i := range rows {
				assert.Equal(t, tc.finds, out.Delivered[i], "%s: row %d delivered", tc.name, i)
				if tc.finds {
					assert.Equal(t, src.mems[0].Slot(i), dst.mems[0].Slot(i), "%s: row %d", tc.name, i)
				} else {
					assert.Equal(t, make([]byte, len(dst.mems[0].Slot(i))), dst.mems[0].Slot(i), "%s: row %d written", tc.name, i)
				}
			}
			require.Nil(t, b.Shutdown(context.Background()))
			<-b.Closed()
			require.NoError(t, drv.Close())
		}
		require.Nil(t, pub.Shutdown(context.Background()))
		<-pub.Closed()
		require.NoError(t, srcDrv.Close())
	})
}

func TestConfigScope(t *testing.T) {
	l := newLender(t, 1, contract.Host)
	b := memBackend(t, memdrv.New(memdrv.NewStore(), memdrv.Options{}), l, FromBlob(storeconfig.Blob{KeyPrefix: "kv", Scope: llamaScope}))
	digest, err := llamaScope.Digest()
	require.NoError(t, err)
	key, err := b.Key([]byte{0x2a})
	require.NoError(t, err)
	assert.Equal(t, "kv/s1-"+digest.String()+"/v1/2a", key)

	bad := llamaScope
	bad.HeadDim = 0
	_, err = bad.Digest()
	require.Error(t, err)
	_, err = Config{Scope: bad}.check()
	require.ErrorIs(t, err, ErrConfig)
	require.ErrorIs(t, err, keys.ErrInvalidScope)
	assert.ErrorContains(t, err, "Scope: keys: invalid scope: head_dim: 0, want at least 1")

	_, err = Config{KeyPrefix: "a//b", Scope: llamaScope}.check()
	require.ErrorIs(t, err, keys.ErrInvalidPrefix)
	assert.NotErrorIs(t, err, keys.ErrInvalidScope)
}
