package tomlfile_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/storeconfig"
	"github.com/kvshare/kvshare/storeconfig/tomlfile"
)

// decodeDisk decodes a file as the disk tier's reader does: [blob] and
// [disk], which it requires.
func decodeDisk(data string) (storeconfig.Disk, error) {
	f := tomlfile.Parse("store.toml", []byte(data), nil)
	f.Blob()
	if f.Parsed() && !f.Has(storeconfig.DiskSection) {
		f.Refuse(storeconfig.DiskSection, "", "is required")
	}
	d := f.Disk()
	return d, f.Finish()
}

func TestDiskSection(t *testing.T) {
	d, err := decodeDisk("[disk]\ndir = \"/nvme/kv\"\ncapacity = 1099511627776\nevict = true\ndurability = \"data\"\ndirect_io = false\nworkers = 8\n")
	require.NoError(t, err)
	assert.Equal(t, storeconfig.Disk{Dir: "/nvme/kv", Capacity: 1 << 40, Evict: true, Durability: "data", DirectIO: false, Workers: 8}, d)

	d, err = decodeDisk("[disk]\ndir = \"/nvme/kv\"\ncapacity = 0\n")
	require.NoError(t, err)
	assert.Equal(t, storeconfig.Disk{Dir: "/nvme/kv", Durability: "full", DirectIO: true, Workers: 4}, d, "keys left out get their defaults")

	d, err = decodeDisk("[disk]\ndir = \"/nvme/kv\"\ncapacity = 0\nworkers = 0\n")
	require.NoError(t, err, "workers = 0 means the default, as in diskdrv.DriverOptions")
	assert.Equal(t, storeconfig.DefaultDiskWorkers, d.Workers)

	f := tomlfile.Parse("store.toml", []byte("[blob]\n"), nil)
	assert.Equal(t, storeconfig.Disk{}, f.Disk(), "no section: the zero Disk")
	assert.NoError(t, f.Finish())
}

func TestDiskRefusalsNameSectionAndKey(t *testing.T) {
	const head = "[disk]\ndir = \"/d\"\ncapacity = 0\n"
	for _, tc := range []struct {
		name, file, key, want string
	}{
		{"no dir", "[disk]\ncapacity = 0\n", "dir", "is required"},
		{"a relative dir", "[disk]\ndir = \"kv\"\ncapacity = 0\n", "dir", `must be an absolute path, got "kv"`},
		{"an empty dir", "[disk]\ndir = \"\"\ncapacity = 0\n", "dir", "is required"},
		{"no capacity", "[disk]\ndir = \"/d\"\n", "capacity", "is required"},
		{"a negative capacity", "[disk]\ndir = \"/d\"\ncapacity = -1\n", "capacity", "must be between 0 and"},
		{"a capacity as a string", "[disk]\ndir = \"/d\"\ncapacity = \"1T\"\n", "capacity", "wants an integer, got a string"},
		{"an unknown durability", head + "durability = \"always\"\n", "durability", `must be one of "full", "data", "none", got "always"`},
		{"an empty durability", head + "durability = \"\"\n", "durability", `got ""`},
		{"evict as a string", head + "evict = \"yes\"\n", "evict", "wants a boolean, got a string"},
		{"direct_io as a number", head + "direct_io = 1\n", "direct_io", "wants a boolean, got an integer"},
		{"negative workers", head + "workers = -1\n", "workers", "must be between 0 (the default, 4) and 1024, got -1"},
		{"too many workers", head + "workers = 5000\n", "workers", "must be between 0 (the default, 4) and 1024, got 5000"},
		{"an unknown key", head + "path = \"/x\"\n", "path", "unknown key (known: dir, capacity, evict, durability, direct_io, workers)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeDisk(tc.file)
			require.ErrorIs(t, err, storeconfig.ErrConfig)
			var e *storeconfig.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "store.toml", e.File)
			assert.Equal(t, "disk", e.Section)
			assert.Equal(t, tc.key, e.Key)
			assert.Contains(t, e.Error(), tc.want)
		})
	}
}

// Every reader knows [disk]: one that decodes only its own section
// accepts a good [disk] beside it and refuses a bad one when it
// finishes.
func TestEveryReaderChecksDisk(t *testing.T) {
	_, _, err := decode("[store]\naddr = \"x:1\"\n[disk]\ndir = \"/d\"\ncapacity = 0\n")
	require.NoError(t, err)
	_, _, err = decode("[store]\naddr = \"x:1\"\n[disk]\ndir = \"d\"\ncapacity = 0\n")
	var e *storeconfig.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "disk", e.Section)
	assert.Equal(t, "dir", e.Key)
}

// FuzzDisk decodes any file as the disk tier's reader: a file accepted
// gives settings that validate; a refusal names the file.
func FuzzDisk(f *testing.F) {
	f.Add("[disk]\ndir = \"/d\"\ncapacity = 1048576\nevict = true\ndurability = \"none\"\ndirect_io = true\nworkers = 1\n")
	f.Add("[disk]\ndir = \"/d\"\ncapacity = 0\n")
	f.Add("[disk]\ndir = \"\"\ncapacity = 9223372036854775807\n")
	f.Add("[disk.dir]\nx = 1\n")
	f.Add("disk = 3\n")
	f.Fuzz(func(t *testing.T, data string) {
		d, err := decodeDisk(data)
		if err != nil {
			var e *storeconfig.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, "store.toml", e.File)
			return
		}
		require.NoError(t, d.Validate(""), "accepted settings validate: %+v", d)
	})
}
