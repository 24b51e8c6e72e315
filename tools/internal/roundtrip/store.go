package roundtrip

import (
	"context"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/storeconfig"
)

// Store is where a round trip's bytes go: it opens one driver per
// lender, every driver a client of the same store, as two engine
// processes would each have their own client of one pool.
type Store interface {
	// Describe names the store in a report, e.g. "the embedded
	// in-memory store".
	Describe() string
	// Workers is the number of worker goroutines of each driver it opens.
	Workers() int
	// OpenDriver opens the driver the named lender lends its region to.
	// The round trip closes it last, in the owner's cleanup order
	// (after a Drain that returned true and every region unregistered).
	OpenDriver(ctx context.Context, lender string) (contract.Driver, error)
}

// MemoryStore is the embedded in-memory store: one bounded memdrv store
// (a cache taken up front outside the Go heap) shared by a memdrv
// driver per lender.
type MemoryStore struct {
	store   *memdrv.Store
	workers int
	blob    storeconfig.Blob // a store file's [blob], when read from one
}

// NewMemoryStore takes a bounded store of o's capacity up front (a
// refusal names the option) whose drivers each run workers goroutines.
// Close gives its memory back.
func NewMemoryStore(workers int, o memdrv.StoreOptions) (*MemoryStore, error) {
	s, err := memdrv.NewBoundedStore(o)
	if err != nil {
		return nil, fmt.Errorf("roundtrip: the embedded store: %w", err)
	}
	return &MemoryStore{store: s, workers: workers}, nil
}

// SizedFor is the bounded store that holds rows objects of rowBytes
// exactly: chunks that divide a row (the largest power of two that
// does, at most memdrv.DefaultChunkBytes; 64 bytes at least), and as
// many as the rows take.
func SizedFor(rows int, rowBytes int64) memdrv.StoreOptions {
	chunk := int64(memdrv.DefaultChunkBytes)
	for chunk > memdrv.MinChunkBytes && rowBytes%chunk != 0 {
		chunk /= 2
	}
	perRow := (rowBytes + chunk - 1) / chunk
	return memdrv.StoreOptions{Capacity: int64(rows) * perRow * chunk, ChunkBytes: chunk}
}

// Describe names the store and says what its memory is: "the embedded
// in-memory store (256 MiB taken up front in chunks of 64 KiB, base
// pages, faulted in in 80ms)".
func (m *MemoryStore) Describe() string {
	st, mem := m.store.Stats(), m.store.Memory()
	if st.Capacity == 0 {
		return "the embedded in-memory store (a capacity of 0: it holds nothing)"
	}
	pages := mem.Pages.String()
	if mem.Advised {
		pages = "transparent huge pages advised"
	}
	if mem.Locked {
		pages += ", locked"
	}
	took := mem.Prefault.Round(time.Millisecond)
	if mem.Prefault < time.Millisecond {
		took = mem.Prefault.Round(time.Microsecond)
	}
	return fmt.Sprintf("the embedded in-memory store (%s taken up front in chunks of %s, %s, faulted in in %v)",
		bytesText(st.Capacity), bytesText(st.ChunkBytes), pages, took)
}

// Workers is the worker goroutines of each driver.
func (m *MemoryStore) Workers() int { return m.workers }

// OpenDriver opens a memdrv driver over the store.
func (m *MemoryStore) OpenDriver(context.Context, string) (contract.Driver, error) {
	if m.workers <= 0 {
		return nil, fmt.Errorf("roundtrip: workers is %d, want > 0", m.workers)
	}
	return memdrv.New(m.store, memdrv.Options{Workers: m.workers}), nil
}

// Store is the bounded store itself (its Stats, for metrics).
func (m *MemoryStore) Store() *memdrv.Store { return m.store }

// Stats are the store's figures: objects, bytes, evictions, declines.
func (m *MemoryStore) Stats() memdrv.StoreStats { return m.store.Stats() }

// Close gives the store's memory back; refused while a driver reads or
// writes it (memdrv.ErrStoreBusy).
func (m *MemoryStore) Close() error { return m.store.Close() }

// bytesText writes n bytes in binary units.
func bytesText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
