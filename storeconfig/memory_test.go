package storeconfig_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/storeconfig"
)

func TestMemoryDefaults(t *testing.T) {
	assert.Equal(t, storeconfig.Memory{HugePages: "none", Workers: 2}, storeconfig.Memory{}.WithDefaults())
	assert.NoError(t, storeconfig.Memory{}.Validate(""), "the zero Memory is valid: a store that holds nothing")
	assert.NoError(t, storeconfig.Memory{Capacity: 8 << 30, ChunkBytes: 16 << 10, HugePages: "2MiB", Lock: true, Workers: 4}.Validate(""))
}

func TestMemoryRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    storeconfig.Memory
		key  string
		want string
	}{
		{"negative capacity", storeconfig.Memory{Capacity: -1}, "capacity", "must be between 0 and 70368744177664, got -1"},
		{"capacity beyond 64 TiB", storeconfig.Memory{Capacity: 1<<46 + 1}, "capacity", "must be between 0"},
		{"too many chunks", storeconfig.Memory{Capacity: 1 << 40, ChunkBytes: 64}, "capacity", "is 17179869184 chunks of 64 bytes, want at most 2147483647"},
		{"chunk not a multiple of 64", storeconfig.Memory{Capacity: 1 << 20, ChunkBytes: 1000}, "chunk_bytes", "must be a multiple of 64 from 64 to 1073741824"},
		{"negative chunk", storeconfig.Memory{Capacity: 1 << 20, ChunkBytes: -64}, "chunk_bytes", "got -64"},
		{"chunk beyond 1 GiB", storeconfig.Memory{Capacity: 4 << 30, ChunkBytes: 2 << 30}, "chunk_bytes", "got 2147483648"},
		{"chunk beyond the capacity", storeconfig.Memory{Capacity: 4096, ChunkBytes: 8192}, "chunk_bytes", "larger than the capacity (4096)"},
		{"an unknown page size", storeconfig.Memory{HugePages: "4KiB"}, "huge_pages", `must be one of "none", "2MiB", "1GiB", got "4KiB"`},
		{"a page size in another case", storeconfig.Memory{HugePages: "2mib"}, "huge_pages", `got "2mib"`},
		{"negative workers", storeconfig.Memory{Workers: -1}, "workers", "must be between 0 (the default, 2) and 1024, got -1"},
		{"too many workers", storeconfig.Memory{Workers: 1025}, "workers", "got 1025"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.m.Validate("store.toml")
			require.ErrorIs(t, err, storeconfig.ErrConfig)
			var e *storeconfig.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "store.toml", e.File)
			assert.Equal(t, "memory", e.Section)
			assert.Equal(t, tc.key, e.Key)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.Len(t, storeconfig.Memory{Capacity: -1, ChunkBytes: 3, HugePages: "x", Workers: -1}.Check("f"), 4, "every refusal, not only the first")
}
