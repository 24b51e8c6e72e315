package doctor

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

const testKey = "kvshare/doctor/20261129t000000z-00000000/v1/70726f6265"

func TestProbeKey(t *testing.T) {
	key, err := probeKey("kvshare/doctor/20261129t000000z-00000000")
	require.NoError(t, err)
	assert.Equal(t, testKey, key)
}

func TestProbeOnAHealthyStore(t *testing.T) {
	store := fakesdk.New(fakesdk.Options{})
	fs := probe(store.Client(), testKey, 4096)
	require.Len(t, fs, 4)
	for i, check := range []string{CheckPut, CheckGet, CheckRemove, CheckClose} {
		assert.Equal(t, check, fs[i].Check)
	}
	assert.Equal(t, OK, fs[0].Verdict, fs[0].Detail)
	assert.Contains(t, fs[0].Detail, "4 KiB stored under "+testKey)
	assert.Equal(t, OK, fs[1].Verdict, fs[1].Detail)
	assert.Contains(t, fs[1].Detail, "byte-identical")
	assert.Equal(t, OK, fs[2].Verdict, fs[2].Detail)
	assert.Contains(t, fs[2].Detail, "removed")
	assert.Equal(t, OK, fs[3].Verdict, fs[3].Detail)
	_, ok := store.Object(testKey)
	assert.False(t, ok, "the probe is removed")
	assert.Equal(t, 1, store.Calls().Remove)
	assert.Zero(t, store.Running())
}

// A client without a remove call leaves the probe, and says so.
func TestProbeWithoutRemove(t *testing.T) {
	store := fakesdk.New(fakesdk.Options{})
	fs := probe(noRemove{store.Client()}, testKey, 4096)
	assert.Equal(t, Skip, fs[2].Verdict)
	assert.Contains(t, fs[2].Detail, "stays in the pool")
	obj, ok := store.Object(testKey)
	require.True(t, ok)
	assert.False(t, bytes.Equal(obj, make([]byte, 4096)), "random bytes")
}

// noRemove hides a client's Remove.
type noRemove struct{ mooncakesdk.Client }

// A remove the store refuses fails the check and names the answer.
func TestProbeRemoveRefused(t *testing.T) {
	store := fakesdk.New(fakesdk.Options{})
	require.NoError(t, store.Script(fakesdk.Fault{Op: fakesdk.Remove, Code: mooncakesdk.ObjectHasLease}))
	fs := probe(store.Client(), testKey, 4096)
	assert.Equal(t, Fail, fs[2].Verdict)
	assert.Contains(t, fs[2].Detail, "OBJECT_HAS_LEASE")
}

func TestProbeFailures(t *testing.T) {
	for _, c := range []struct {
		name   string
		fault  *fakesdk.Fault
		seed   []byte
		opts   fakesdk.Options
		put    Verdict
		get    Verdict
		close  Verdict
		want   string // in the failing line
		failed string
	}{
		{name: "pool full or no segment", opts: fakesdk.Options{Capacity: 1024},
			put: Fail, get: Skip, close: OK, failed: CheckPut, want: "NO_AVAILABLE_HANDLE(-200): the pool has no room, or no segment at all"},
		{name: "put transfer fail keeps the buffer", fault: &fakesdk.Fault{Op: fakesdk.Put, Code: mooncakesdk.TransferFail},
			put: Fail, get: Skip, close: Skip, failed: CheckPut, want: "TRANSFER_FAIL(-800)"},
		{name: "put fails as a whole", fault: &fakesdk.Fault{Op: fakesdk.Put, Fail: true},
			put: Fail, get: Skip, close: Skip, failed: CheckPut, want: "failed as a whole"},
		{name: "put 0 not confirmed", fault: &fakesdk.Fault{Op: fakesdk.Put, Vanish: true, Phase: fakesdk.AfterLanding},
			put: Fail, get: Skip, close: OK, failed: CheckPut, want: "no complete object stands behind the key"},
		{name: "register refused", fault: &fakesdk.Fault{Op: fakesdk.Register, Code: mooncakesdk.InvalidParams},
			put: Fail, get: Skip, close: OK, failed: CheckPut, want: "registering the probe's 8 KiB buffer"},
		{name: "object vanished", fault: &fakesdk.Fault{Op: fakesdk.Get, Vanish: true},
			put: OK, get: Fail, close: OK, failed: CheckGet, want: "OBJECT_NOT_FOUND(-704): the object vanished"},
		{name: "get transfer fail keeps the buffer", fault: &fakesdk.Fault{Op: fakesdk.Get, Code: mooncakesdk.TransferFail},
			put: OK, get: Fail, close: Skip, failed: CheckGet, want: "TRANSFER_FAIL(-800)"},
		{name: "key held other bytes", seed: []byte("other bytes"),
			put: OK, get: Fail, close: OK, failed: CheckGet, want: "answered 11 bytes, want 4096"},
		{name: "key held other bytes of the same size", seed: bytes.Repeat([]byte{7}, 4096),
			put: OK, get: Fail, close: OK, failed: CheckGet, want: "they differ from the bytes put"},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := fakesdk.New(c.opts)
			if c.fault != nil {
				require.NoError(t, store.Script(*c.fault))
			}
			if c.seed != nil {
				_, err := store.Seed(testKey, c.seed)
				require.NoError(t, err)
			}
			fs := probe(store.Client(), testKey, 4096)
			require.Len(t, fs, 4)
			assert.Equal(t, c.put, fs[0].Verdict, "put: %s", fs[0].Detail)
			assert.Equal(t, c.get, fs[1].Verdict, "get: %s", fs[1].Detail)
			assert.Equal(t, c.close, fs[3].Verdict, "close: %s", fs[3].Detail)
			for _, f := range fs {
				if f.Check == c.failed {
					assert.Contains(t, f.Detail, c.want)
				}
			}
			if c.close == Skip {
				assert.Contains(t, fs[3].Detail, "stays registered and mapped and the client is not destroyed")
			}
		})
	}
}
