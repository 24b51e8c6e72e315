package mooncakedrv

import (
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
	// Logger receives the driver's warnings (faulted rows and the codes
	// the store answered, unprovable access, panics recovered around the
	// SDK); nil means slog.Default().
	Logger *slog.Logger
}

// ConfigFrom returns the driver settings of a store config's [mooncake]
// section.
func ConfigFrom(m mooncakesdk.MooncakeConfig) Config {
	return Config{Workers: m.Workers, RowsPerCall: m.RowsPerCall, BytesPerCall: m.BytesPerCall}
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
