package tomlfile_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/storeconfig"
	"github.com/kvshare/kvshare/storeconfig/tomlfile"
)

// decodeMemory decodes a file as the embedded store's reader does:
// [blob] and [memory], no store section of its own.
func decodeMemory(data string) (storeconfig.Memory, error) {
	f := tomlfile.Parse("store.toml", []byte(data), nil)
	f.Blob()
	m := f.Memory()
	return m, f.Finish()
}

func TestMemorySection(t *testing.T) {
	m, err := decodeMemory("[memory]\ncapacity = 8589934592\nchunk_bytes = 16384\nhuge_pages = \"2MiB\"\nlock = true\nworkers = 4\n")
	require.NoError(t, err)
	assert.Equal(t, storeconfig.Memory{Capacity: 8 << 30, ChunkBytes: 16 << 10, HugePages: "2MiB", Lock: true, Workers: 4}, m)

	m, err = decodeMemory("[memory]\ncapacity = 0\n")
	require.NoError(t, err)
	assert.Equal(t, storeconfig.Memory{HugePages: "none", Workers: 2}, m, "keys left out get their defaults; capacity 0 holds nothing")

	m, err = decodeMemory("[memory]\ncapacity = 0\nworkers = 0\n")
	require.NoError(t, err, "workers = 0 means the default, as in memdrv.Options")
	assert.Equal(t, storeconfig.DefaultMemoryWorkers, m.Workers)

	f := tomlfile.Parse("store.toml", []byte("[blob]\n"), nil)
	assert.False(t, f.Has(storeconfig.MemorySection))
	assert.Equal(t, storeconfig.Memory{}, f.Memory(), "no section: the zero Memory")
	assert.NoError(t, f.Finish())
}

func TestMemoryRefusalsNameSectionAndKey(t *testing.T) {
	for _, tc := range []struct {
		name, file, key, want string
	}{
		{"no capacity", "[memory]\nworkers = 2\n", "capacity", "is required"},
		{"a capacity of the wrong type", "[memory]\ncapacity = \"8G\"\n", "capacity", "wants an integer, got a string (8G)"},
		{"a negative capacity", "[memory]\ncapacity = -1\n", "capacity", "must be between 0 and 70368744177664, got -1"},
		{"a float chunk", "[memory]\ncapacity = 1048576\nchunk_bytes = 4096.0\n", "chunk_bytes", "wants an integer, got a float"},
		{"an odd chunk", "[memory]\ncapacity = 1048576\nchunk_bytes = 1000\n", "chunk_bytes", "must be a multiple of 64"},
		{"a page size as a number", "[memory]\ncapacity = 1048576\nhuge_pages = 2\n", "huge_pages", "wants a string, got an integer"},
		{"an unknown page size", "[memory]\ncapacity = 1048576\nhuge_pages = \"2M\"\n", "huge_pages", `got "2M"`},
		{"an empty page size", "[memory]\ncapacity = 1048576\nhuge_pages = \"\"\n", "huge_pages", `must be one of "none", "2MiB", "1GiB", got ""`},
		{"lock as a string", "[memory]\ncapacity = 1048576\nlock = \"yes\"\n", "lock", "wants a boolean, got a string"},
		{"negative workers", "[memory]\ncapacity = 1048576\nworkers = -1\n", "workers", "must be between 0 (the default, 2) and 1024, got -1"},
		{"an unknown key", "[memory]\ncapacity = 1048576\nsize = 1\n", "size", "unknown key (known: capacity, chunk_bytes, huge_pages, lock, workers)"},
		{"a key in another case", "[memory]\ncapacity = 1048576\nCapacity = 1\n", "Capacity", "unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeMemory(tc.file)
			require.ErrorIs(t, err, storeconfig.ErrConfig)
			var e *storeconfig.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "store.toml", e.File)
			assert.Equal(t, "memory", e.Section)
			assert.Equal(t, tc.key, e.Key)
			assert.Contains(t, e.Error(), tc.want)
		})
	}
}

// Every reader knows [memory]: one that decodes only its own section
// (here [store]) accepts a good [memory] beside it and refuses a bad
// one, naming the key, when it finishes.
func TestEveryReaderChecksMemory(t *testing.T) {
	_, _, err := decode("[store]\naddr = \"x:1\"\n[memory]\ncapacity = 1048576\n")
	require.NoError(t, err)
	_, _, err = decode("[store]\naddr = \"x:1\"\n[memory]\ncapacity = 1048576\nworkers = 5000\n")
	var e *storeconfig.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "memory", e.Section)
	assert.Equal(t, "workers", e.Key)
	_, _, err = decode("[store]\naddr = \"x:1\"\n[memory]\n")
	assert.ErrorContains(t, err, "[memory] capacity: is required")
}

// FuzzMemory decodes any file as the embedded store's reader: a file
// accepted gives settings that validate; a refusal names the file.
func FuzzMemory(f *testing.F) {
	f.Add("[memory]\ncapacity = 1048576\nchunk_bytes = 4096\nhuge_pages = \"1GiB\"\nlock = false\nworkers = 1\n")
	f.Add("[memory]\ncapacity = 0\n")
	f.Add("[memory]\ncapacity = 9223372036854775807\nchunk_bytes = -1\n")
	f.Add("[memory.capacity]\nx = 1\n")
	f.Add("memory = 3\n")
	f.Fuzz(func(t *testing.T, data string) {
		m, err := decodeMemory(data)
		if err != nil {
			var e *storeconfig.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, "store.toml", e.File)
			return
		}
		require.NoError(t, m.Validate(""), "accepted settings validate: %+v", m)
	})
}
