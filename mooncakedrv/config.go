package mooncakedrv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// ErrConfig is wrapped by every error [New] returns for a bad [Config].
var ErrConfig = errors.New("mooncakedrv: bad driver config")

// Config shapes a driver. The zero value takes every default.
type Config struct {
	// Workers is the number of worker goroutines running parts (one SDK
	// call at a time each); 0 means mooncakesdk.DefaultWorkers (4).
	Workers int
	// RowsPerCall caps the rows of one part (one SDK call); 0 means
	// mooncakesdk.DefaultRowsPerCall (256).
	RowsPerCall int
	// BytesPerCall caps the bytes of one part; 0 means
	// mooncakesdk.DefaultBytesPerCall (128 MiB). A row larger than the
	// cap still goes, alone.
	BytesPerCall int64
	// CallPerPart makes every part an SDK call of its own. By default,
	// while the workers are busy, a worker that takes a part also takes
	// the queued parts of the same direction that fit in its call
	// (RowsPerCall rows, BytesPerCall bytes, no key twice), and one SDK
	// call moves them all: fewer, larger calls, at the price that a call
	// failing as a whole, or a -800 in it, makes every operation with a
	// row in it Unprovable, and a part taken into a call can no longer be
	// cancelled ([Stats].CallsShared counts such calls).
	CallPerPart bool
	// CallsInFlight, when above 0, is the most workers of one direction
	// inside the store at once (each makes its calls one after another):
	// while that many run, the parts of that direction queue, and join
	// the next call up to its caps. The Mooncake library's default build
	// waits for a transfer by spinning a core, so a call beside a full
	// one costs a core and moves little more. 0 means no bound beyond
	// Workers (a store file's calls_in_flight defaults to 1).
	CallsInFlight int
	// Reopen opens the fresh client a Recycle swaps in for the one it
	// destroyed (OpenConfig sets it to open the same store config
	// again). Nil: Recycle destroys the client and leaves the driver
	// without one ([contract.ErrRecycledClosed]).
	Reopen func(ctx context.Context) (mooncakesdk.Client, error)
	// Logger receives the driver's warnings (faulted rows and the codes
	// the store answered, unprovable access, panics recovered around the
	// SDK); nil means slog.Default().
	Logger *slog.Logger
}

// ConfigFrom returns the driver settings of a store config's [mooncake]
// section.
func ConfigFrom(m mooncakesdk.MooncakeConfig) Config {
	return Config{Workers: m.Workers, RowsPerCall: m.RowsPerCall, BytesPerCall: m.BytesPerCall, CallsInFlight: m.CallsInFlight}
}

// withDefaults fills in the defaults and checks the rest.
func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Workers < 0:
		return c, fmt.Errorf("%w: Workers is %d, want >= 0 (0 = %d)", ErrConfig, c.Workers, mooncakesdk.DefaultWorkers)
	case c.RowsPerCall < 0:
		return c, fmt.Errorf("%w: RowsPerCall is %d, want >= 0 (0 = %d)", ErrConfig, c.RowsPerCall, mooncakesdk.DefaultRowsPerCall)
	case c.BytesPerCall < 0:
		return c, fmt.Errorf("%w: BytesPerCall is %d, want >= 0 (0 = %d)", ErrConfig, c.BytesPerCall, mooncakesdk.DefaultBytesPerCall)
	case c.CallsInFlight < 0:
		return c, fmt.Errorf("%w: CallsInFlight is %d, want >= 0 (0 = no bound)", ErrConfig, c.CallsInFlight)
	}
	if c.Workers == 0 {
		c.Workers = mooncakesdk.DefaultWorkers
	}
	if c.RowsPerCall == 0 {
		c.RowsPerCall = mooncakesdk.DefaultRowsPerCall
	}
	if c.BytesPerCall == 0 {
		c.BytesPerCall = mooncakesdk.DefaultBytesPerCall
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}
