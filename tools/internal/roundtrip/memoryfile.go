package roundtrip

import (
	"fmt"

	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/storeconfig"
	"github.com/kvshare/kvshare/storeconfig/tomlfile"
)

// MemoryStoreFile reads the store file at path, one of the embedded
// store ([blob] and [memory]; every refusal names the file, the section
// and the key), and takes the store it describes up front.
func MemoryStoreFile(path string) (*MemoryStore, error) {
	f := tomlfile.Read(path, nil)
	blob := f.Blob()
	if f.Parsed() && !f.Has(storeconfig.MemorySection) {
		f.Refuse(storeconfig.MemorySection, "", "is required: the embedded store's file holds a [memory] section")
	}
	mem := f.Memory()
	if err := f.Finish(); err != nil {
		return nil, err
	}
	m, err := NewMemoryStore(mem.Workers, StoreOptions(mem))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m.blob = blob
	return m, nil
}

// StoreOptions are the bounded store's options a [memory] section gives.
func StoreOptions(m storeconfig.Memory) memdrv.StoreOptions {
	pages := hostmem.NormalPages
	switch m.HugePages {
	case storeconfig.HugePages2MiB:
		pages = hostmem.HugePages2MiB
	case storeconfig.HugePages1GiB:
		pages = hostmem.HugePages1GiB
	}
	return memdrv.StoreOptions{Capacity: m.Capacity, ChunkBytes: m.ChunkBytes, HugePages: pages, Lock: m.Lock}
}

// Configure points cfg at the store: its Store, its workers, and the
// backend settings of the file's [blob] section (key_prefix, when set,
// as the base of the run's keys; rows_per_call and bytes_per_call as
// the backends' caps).
func (m *MemoryStore) Configure(cfg *Config) {
	cfg.Store = m
	cfg.Workers = m.workers
	if m.blob.KeyPrefix != "" {
		cfg.KeyPrefix = m.blob.KeyPrefix
	}
	cfg.RowsPerCall = m.blob.RowsPerCall
	cfg.BytesPerCall = m.blob.BytesPerCall
}
