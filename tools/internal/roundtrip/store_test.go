package roundtrip

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

// fakePool is a Store of Mooncake drivers over one fakesdk pool: the
// round trip's Mooncake path on any machine.
type fakePool struct {
	pool   *fakesdk.Store
	opened int
}

func (f *fakePool) Describe() string { return "a fake Mooncake pool" }
func (f *fakePool) Workers() int     { return 2 }
func (f *fakePool) OpenDriver(_ context.Context, _ string) (contract.Driver, error) {
	f.opened++
	return mooncakedrv.New(f.pool.Client(), mooncakedrv.Config{Workers: 2, RowsPerCall: 5})
}

func TestRunOverMooncakeDrivers(t *testing.T) {
	fp := &fakePool{pool: fakesdk.New(fakesdk.Options{})}
	c := small()
	c.Store = fp
	c.RowsPerCall = 3
	rep, err := Run(t.Context(), c, nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "report: %+v", rep)
	assert.Equal(t, 2, fp.opened, "one driver per lender")
	assert.Equal(t, "a fake Mooncake pool", rep.Store)
	assert.Equal(t, int64(37), rep.Publish.Rows[contract.Ready])
	assert.Equal(t, int64(37), rep.Fetch.Rows[contract.Ready])
	assert.Equal(t, int64(37*(4096+7)), fp.pool.Used(), "every row stored once")
}

// A store that never overwrites would serve a second run under the same
// keys from the first run's objects. Each run has its own prefix, so the
// second run stores its own bytes.
func TestEveryRunStoresItsOwnObjects(t *testing.T) {
	fp := &fakePool{pool: fakesdk.New(fakesdk.Options{})}
	c := small()
	c.Store = fp
	first, err := Run(t.Context(), c, nil)
	require.NoError(t, err)
	second, err := Run(t.Context(), c, nil)
	require.NoError(t, err)
	assert.True(t, first.OK())
	assert.True(t, second.OK())
	assert.NotEqual(t, first.KeyPrefix, second.KeyPrefix)
	assert.True(t, strings.HasPrefix(second.KeyPrefix, "kvshare/roundtrip/"), second.KeyPrefix)
	assert.Equal(t, int64(2*37*(4096+7)), fp.pool.Used(), "the second run stored its own bytes, same seed or not")
}

func TestMemoryStoreIsTheDefault(t *testing.T) {
	rep, err := Run(t.Context(), small(), nil)
	require.NoError(t, err)
	assert.Regexp(t, `^the embedded in-memory store \(\d+(\.\d)? (KiB|MiB) taken up front in chunks of 64 B, base pages, faulted in in \S+\)$`, rep.Store)
	assert.Regexp(t, `^kvshare/roundtrip/\d{8}t\d{6}z-[0-9a-f]{8}$`, rep.KeyPrefix)
}

func TestBadKeyPrefixIsRefusedBeforeAnyDriver(t *testing.T) {
	fp := &fakePool{pool: fakesdk.New(fakesdk.Options{})}
	c := small()
	c.Store = fp
	c.KeyPrefix = "bad prefix/"
	_, err := Run(t.Context(), c, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `key prefix "bad prefix/"`)
	assert.Zero(t, fp.opened)
}

// A driver that cannot be opened for the second lender: the first lender
// is closed in the owner's order and its memory goes back.
func TestFailedDriverClosesTheOtherLender(t *testing.T) {
	fs := &failingSecond{fakePool: fakePool{pool: fakesdk.New(fakesdk.Options{})}}
	c := small()
	c.Store = fs
	_, err := Run(t.Context(), c, nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, assert.AnError)
	assert.Contains(t, err.Error(), "fetcher: ")
	assert.NotContains(t, err.Error(), "kept", "the publisher closed in order, its memory given back")
	assert.Equal(t, 2, fs.opened)
}

type failingSecond struct{ fakePool }

func (f *failingSecond) OpenDriver(ctx context.Context, lender string) (contract.Driver, error) {
	if f.opened == 1 {
		f.opened++
		return nil, assert.AnError
	}
	return f.fakePool.OpenDriver(ctx, lender)
}

func TestMooncakeStoreReadsTheConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.toml")
	require.NoError(t, os.WriteFile(path, []byte(`[blob]
key_prefix = "team/kv"
rows_per_call = 32
bytes_per_call = 8388608

[mooncake]
master = "10.0.0.1:25151"
metadata_server = "http://10.0.0.1:28180/metadata"
local_hostname = "10.0.0.2"
workers = 3
`), 0o644))
	m, err := MooncakeStore(path, nil)
	require.NoError(t, err)
	c := Defaults()
	m.Configure(&c)
	assert.Same(t, m, c.Store)
	assert.Equal(t, "team/kv", c.KeyPrefix)
	assert.Equal(t, 32, c.RowsPerCall)
	assert.Equal(t, int64(8<<20), c.BytesPerCall)
	assert.Equal(t, 3, m.Workers())
	assert.Equal(t, "the Mooncake pool of "+path+" at master 10.0.0.1:25151", m.Describe())
}

func TestMooncakeStoreNamesABadConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.toml")
	require.NoError(t, os.WriteFile(path, []byte("[mooncake]\nmaster = [\"a:1\", \"b:2\"]\n"), 0o644))
	_, err := MooncakeStore(path, nil)
	require.ErrorIs(t, err, mooncakesdk.ErrConfig)
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), "[mooncake] master: an HA master list is not supported")
}
