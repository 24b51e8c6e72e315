package roundtrip

import (
	"context"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
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

// memoryStore is the embedded in-memory store: one memdrv.Store shared
// by a memdrv driver per lender.
type memoryStore struct {
	store   *memdrv.Store
	workers int
}

// MemoryStore returns a fresh embedded in-memory store whose drivers
// each run workers goroutines.
func MemoryStore(workers int) Store {
	return &memoryStore{store: memdrv.NewStore(), workers: workers}
}

// SizedMemoryStore returns a fresh embedded in-memory store that takes
// capacity bytes up front, faulted in (memdrv.NewSizedStore), so that
// publishes copy into memory already mapped; its drivers each run
// workers goroutines.
func SizedMemoryStore(workers int, capacity int64) (Store, error) {
	s, err := memdrv.NewSizedStore(capacity)
	if err != nil {
		return nil, fmt.Errorf("roundtrip: %w", err)
	}
	return &memoryStore{store: s, workers: workers}, nil
}

func (m *memoryStore) Describe() string {
	if d := m.store.Prefault(); d > 0 {
		return fmt.Sprintf("the embedded in-memory store (taken up front, faulted in in %v)", d.Round(time.Millisecond))
	}
	return "the embedded in-memory store"
}

func (m *memoryStore) Workers() int { return m.workers }

func (m *memoryStore) OpenDriver(context.Context, string) (contract.Driver, error) {
	if m.workers <= 0 {
		return nil, fmt.Errorf("roundtrip: workers is %d, want > 0", m.workers)
	}
	return memdrv.New(m.store, memdrv.Options{Workers: m.workers}), nil
}
