package storefile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/storeconfig"
)

func TestKinds(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       Kind
	}{
		{"mooncake", "[blob]\nkey_prefix = \"k\"\n\n[mooncake]\nmaster = \"127.0.0.1:1\"\n", Mooncake},
		{"redis", "[redis]\naddress = \"127.0.0.1:6379\"\n", Redis},
		{"unknown keys are the store's to refuse", "[redis]\nadress = 1\n[extra]\n", Redis},
		{"an empty section", "[mooncake]\n", Mooncake},
		{"memory", "[blob]\nkey_prefix = \"k\"\n[memory]\ncapacity = 1048576\n", Memory},
		{"memory's keys are its reader's to check", "[memory]\nsize = 1\n", Memory},
		{"disk", "[blob]\nkey_prefix = \"k\"\n[disk]\ndir = \"/kv\"\ncapacity = 0\n", Disk},
		{"disk's keys are its reader's to check", "[disk]\nsize = 1\n", Disk},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, err := Parse("store.toml", []byte(c.text))
			require.NoError(t, err)
			assert.Equal(t, c.want, k)
		})
	}
	assert.Equal(t, "Mooncake", Mooncake.String())
	assert.Equal(t, "Redis", Redis.String())
	assert.Equal(t, "the embedded store", Memory.String())
	assert.Equal(t, "the disk tier", Disk.String())
	assert.Equal(t, "Kind(0)", Kind(0).String())
}

func TestRefusalsNameTheFile(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       []string
	}{
		{"both", "[mooncake]\n[redis]\n", []string{"holds both [mooncake] and [redis]", "one store"}},
		{"neither", "[blob]\nkey_prefix = \"k\"\n", []string{"holds neither [mooncake]", "nor [redis]", "nor [memory]"}},
		{"memory and redis", "[memory]\ncapacity = 0\n[redis]\n", []string{"holds both [memory] (the embedded store) and [redis]", "one store"}},
		{"memory and mooncake", "[mooncake]\n[memory]\ncapacity = 0\n", []string{"holds both [memory] (the embedded store) and [mooncake]"}},
		{"disk and redis", "[disk]\n[redis]\n", []string{"holds both [disk] (the disk tier) and [redis]", "one store"}},
		{"empty", "", []string{"holds neither"}},
		{"malformed", "[redis\n", []string{"malformed TOML"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("dir/store.toml", []byte(c.text))
			require.ErrorIs(t, err, ErrKind)
			assert.Contains(t, err.Error(), "dir/store.toml")
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "redis.toml")
	require.NoError(t, os.WriteFile(path, []byte("[redis]\naddress = \"127.0.0.1:6379\"\n"), 0o644))
	k, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, Redis, k)

	missing := filepath.Join(t.TempDir(), "nosuch.toml")
	_, err = Read(missing)
	require.ErrorIs(t, err, ErrKind)
	assert.Contains(t, err.Error(), missing)
	assert.Contains(t, err.Error(), "no such file")
}

func TestNode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "store.toml")
	require.NoError(t, os.WriteFile(path, []byte("[mooncake]\nmaster = \"x:1\"\n[node]\nsocket = \"/run/kvshare/node.sock\"\nallow_uids = [1000]\n"), 0o644))
	n, err := Node(path)
	require.NoError(t, err)
	assert.Equal(t, "/run/kvshare/node.sock", n.Socket)
	assert.Equal(t, []uint32{1000}, n.AllowUIDs)

	require.NoError(t, os.WriteFile(path, []byte("[redis]\naddress = \"x:1\"\n[node]\nmax_attempts = -1\n"), 0o644))
	_, err = Node(path)
	var e *storeconfig.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, path, e.File)
	assert.Equal(t, "max_attempts", e.Key)

	_, err = Node(filepath.Join(dir, "nosuch.toml"))
	assert.ErrorIs(t, err, storeconfig.ErrConfig)
}
