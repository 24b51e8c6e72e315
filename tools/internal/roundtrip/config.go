package roundtrip

import (
	"fmt"
	"time"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/tools/internal/runprefix"
)

// Config is one round trip's shape. The zero value is not usable; start
// from [Defaults].
type Config struct {
	// Rows is the number of KV blocks moved; RowBytes the size of each.
	Rows     int
	RowBytes int64
	// ViewRows is the rows of one submitted view (one attempt); the
	// round trip submits Rows/ViewRows attempts at once, as an engine
	// would for several requests.
	ViewRows int
	// Workers is the worker goroutines of each in-memory driver; a Store
	// given below sets its own drivers' workers.
	Workers int
	// KeyPrefix is the base of every store key: each run stores under a
	// prefix of its own, KeyPrefix/roundtrip/<run> (package runprefix),
	// since a store that never overwrites would otherwise serve a
	// second run the first run's objects without storing anything.
	KeyPrefix string
	// RowsPerCall and BytesPerCall cap one driver call of the backends
	// (binding.Config's MaxRowsPerCall and MaxBytesPerCall); 0 means no
	// cap of the backend's own.
	RowsPerCall  int
	BytesPerCall int64
	// Store opens each lender's driver; nil means the embedded in-memory
	// store ([NewMemoryStore] with Workers, [SizedFor] the rows).
	Store Store
	// Observe, when set, is told of each lender once its backend is
	// built: its name ("publisher", "fetcher"), backend and driver (the
	// kvshare command's --metrics observes them). The function it
	// returns is called once the round trip is over, before the lender
	// is closed.
	Observe func(lender string, b *binding.Backend, d contract.Driver) (done func())
	// Floor measures the raw floor beside the job (a Mooncake pool
	// only: [ErrNoFloor]): the same rows in the same calls straight on a
	// client of the pool, once before the job and once after it
	// (Report.Floor).
	Floor bool
	// Timeout bounds the whole run.
	Timeout time.Duration
	// Seed makes the published bytes reproducible.
	Seed uint64
}

// Defaults returns a shape that finishes in a few seconds on a 2-core
// machine: 1024 blocks of 256 KiB (256 MiB each way), 64 per view, two
// workers per driver, through the embedded in-memory store, keys under
// kvshare/roundtrip/<run>.
func Defaults() Config {
	return Config{
		Rows:      1024,
		RowBytes:  256 << 10,
		ViewRows:  64,
		Workers:   2,
		KeyPrefix: runprefix.DefaultBase,
		Timeout:   2 * time.Minute,
		Seed:      1,
	}
}

// Validate names the first field that is out of range.
func (c Config) Validate() error {
	switch {
	case c.Rows <= 0:
		return fmt.Errorf("roundtrip: rows is %d, want > 0", c.Rows)
	case c.RowBytes <= 0:
		return fmt.Errorf("roundtrip: row bytes is %d, want > 0", c.RowBytes)
	case c.RowBytes > 1<<40/int64(c.Rows):
		return fmt.Errorf("roundtrip: rows*row bytes is over 1 TiB (%d*%d)", c.Rows, c.RowBytes)
	case c.ViewRows <= 0:
		return fmt.Errorf("roundtrip: view rows is %d, want > 0", c.ViewRows)
	case c.Workers <= 0:
		return fmt.Errorf("roundtrip: workers is %d, want > 0", c.Workers)
	case c.Timeout <= 0:
		return fmt.Errorf("roundtrip: timeout is %v, want > 0", c.Timeout)
	case c.RowsPerCall < 0:
		return fmt.Errorf("roundtrip: rows per call is %d, want >= 0 (0: no cap)", c.RowsPerCall)
	case c.BytesPerCall < 0:
		return fmt.Errorf("roundtrip: bytes per call is %d, want >= 0 (0: no cap)", c.BytesPerCall)
	}
	return nil
}
