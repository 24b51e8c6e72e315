package diskdrv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/storeconfig"
)

// A store file opens the store it names with its settings; a bad one is
// refused naming the file, the section and the key, and opens nothing.
func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	path := filepath.Join(dir, "disk.toml")
	require.NoError(t, os.WriteFile(path, []byte("[blob]\nrows_per_call = 8\n[disk]\ndir = \""+data+"\"\ncapacity = 1048576\nevict = true\ndurability = \"none\"\ndirect_io = false\nworkers = 3\n"), 0o644))
	s, sf, err := OpenFile(path, nil)
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, data, s.Dir())
	assert.Equal(t, Options{Capacity: 1 << 20, Evict: true, Durability: None, NoDirectIO: true}, func() Options { o := s.o; o.Logger = nil; return o }())
	assert.Equal(t, DriverOptions{Workers: 3, CallRows: 8}, sf.DriverOptions(nil))

	for _, c := range []struct{ name, text, section, key string }{
		{"no [disk]", "[blob]\n", "disk", ""},
		{"a relative dir", "[disk]\ndir = \"data\"\ncapacity = 0\n", "disk", "dir"},
		{"an unknown section", "[disk]\ndir = \"/d\"\ncapacity = 0\n[redis]\n", "redis", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := filepath.Join(dir, "bad.toml")
			require.NoError(t, os.WriteFile(bad, []byte(c.text), 0o644))
			_, _, err := OpenFile(bad, nil)
			var e *storeconfig.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, bad, e.File)
			assert.Equal(t, c.section, e.Section)
			assert.Equal(t, c.key, e.Key)
		})
	}
}

// workers = 0 in the file means the default, as DriverOptions{Workers:
// 0} does; a negative count is refused naming the key.
func TestStoreFileWorkersZeroIsTheDefault(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		workers string
		want    int
		refused bool
	}{
		{"0", storeconfig.DefaultDiskWorkers, false},
		{"2", 2, false},
		{"-1", 0, true},
	} {
		path := filepath.Join(dir, "disk.toml")
		require.NoError(t, os.WriteFile(path, []byte("[disk]\ndir = \"/kv\"\ncapacity = 0\nworkers = "+c.workers+"\n"), 0o644))
		sf, err := LoadStoreFile(path)
		if c.refused {
			var e *storeconfig.Error
			require.ErrorAs(t, err, &e, "workers = %s", c.workers)
			assert.Equal(t, "workers", e.Key)
			assert.Contains(t, e.Error(), "0 (the default")
			continue
		}
		require.NoError(t, err, "workers = %s", c.workers)
		assert.Equal(t, c.want, sf.DriverOptions(nil).Workers, "workers = %s", c.workers)
	}
}
