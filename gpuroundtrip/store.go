package gpuroundtrip

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/mooncakedrv"
)

// Store is where a round trip's blocks go: it opens one driver per
// lender, each a client of the same store, as two engine processes would
// each have their own client of one pool.
type Store interface {
	// Describe names the store in a report.
	Describe() string
	// OpenDriver opens the driver the named lender lends its staging
	// slots to. The lender owns it and closes it last.
	OpenDriver(ctx context.Context, lender string) (contract.Driver, error)
}

// memoryStore is the embedded in-memory store: one memdrv.Store shared by
// a memdrv driver per lender.
type memoryStore struct {
	store   *memdrv.Store
	workers int
}

// MemoryStore returns a fresh embedded in-memory store whose drivers each
// run workers goroutines.
func MemoryStore(workers int) Store {
	return &memoryStore{store: memdrv.NewStore(), workers: workers}
}

func (m *memoryStore) Describe() string { return "the embedded in-memory store" }

func (m *memoryStore) OpenDriver(context.Context, string) (contract.Driver, error) {
	if m.workers <= 0 {
		return nil, fmt.Errorf("%w: workers is %d, want > 0", ErrConfig, m.workers)
	}
	return memdrv.New(m.store, memdrv.Options{Workers: m.workers}), nil
}

// mooncakeStore is the Mooncake pool a store config file describes.
type mooncakeStore struct {
	path   string
	logger *slog.Logger
}

// MooncakeStore returns the Mooncake pool the store config file at path
// describes: each lender's driver is a client of its own
// (mooncakedrv.Open), opened when the lender asks. logger (nil:
// slog.Default()) receives the SDK's and the drivers' records.
func MooncakeStore(path string, logger *slog.Logger) Store {
	return &mooncakeStore{path: path, logger: logger}
}

func (m *mooncakeStore) Describe() string { return "the Mooncake pool of " + m.path }

func (m *mooncakeStore) OpenDriver(ctx context.Context, lender string) (contract.Driver, error) {
	d, _, err := mooncakedrv.Open(ctx, m.path, m.logger)
	if err != nil {
		return nil, fmt.Errorf("%s's driver: %w", lender, err)
	}
	return d, nil
}
