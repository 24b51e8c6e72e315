package redisdrv

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// The defaults a driver gets for settings left at zero.
const (
	DefaultWorkers      = 4
	DefaultRowsPerCall  = 64
	DefaultBytesPerCall = 64 << 20
)

// The derived call timeout (see [Config.CallTimeout]): a fixed floor for
// the round trip, plus the part's bytes at a rate no loopback or data
// center link falls below unless something is wrong.
const (
	timeoutFloor    = 2 * time.Second
	timeoutRateBPS  = 64 << 20 // bytes a second
	maxCallDeadline = 10 * time.Minute
)

// ErrConfig is wrapped by every error [New] returns for a bad [Config].
var ErrConfig = errors.New("redisdrv: bad driver config")

// Config shapes a driver. The zero value takes every default.
type Config struct {
	// Workers is the number of worker goroutines running parts, each one
	// pipelined round trip at a time on a connection of its own; 0 means
	// DefaultWorkers (4).
	Workers int
	// RowsPerCall caps the rows of one part (one pipeline); 0 means
	// DefaultRowsPerCall (64).
	RowsPerCall int
	// BytesPerCall caps the bytes of one part; 0 means DefaultBytesPerCall
	// (64 MiB). A row larger than the cap still goes, alone.
	BytesPerCall int64
	// CallTimeout bounds one part's round trip (and one lookup's). 0
	// derives it from the part's bytes: 2 s plus the bytes at 64 MiB/s.
	// The client's connection deadline (rueidis ConnWriteTimeout) bounds
	// it too: a part whose round trip runs past either ends Fault, its
	// access ended (see the package documentation).
	CallTimeout time.Duration
	// Logger receives the driver's warnings; nil means slog.Default().
	Logger *slog.Logger
}

// withDefaults fills in the defaults and checks the rest.
func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Workers < 0:
		return c, fmt.Errorf("%w: Workers is %d, want >= 0 (0 = %d)", ErrConfig, c.Workers, DefaultWorkers)
	case c.RowsPerCall < 0:
		return c, fmt.Errorf("%w: RowsPerCall is %d, want >= 0 (0 = %d)", ErrConfig, c.RowsPerCall, DefaultRowsPerCall)
	case c.BytesPerCall < 0:
		return c, fmt.Errorf("%w: BytesPerCall is %d, want >= 0 (0 = %d)", ErrConfig, c.BytesPerCall, DefaultBytesPerCall)
	case c.CallTimeout < 0:
		return c, fmt.Errorf("%w: CallTimeout is %v, want >= 0 (0 = derived from the part's bytes)", ErrConfig, c.CallTimeout)
	}
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if c.RowsPerCall == 0 {
		c.RowsPerCall = DefaultRowsPerCall
	}
	if c.BytesPerCall == 0 {
		c.BytesPerCall = DefaultBytesPerCall
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

// callTimeout is the bound of one round trip carrying bytes bytes.
func (c Config) callTimeout(bytes int64) time.Duration {
	if c.CallTimeout > 0 {
		return c.CallTimeout
	}
	return DerivedTimeout(bytes)
}

// DerivedTimeout is the round-trip bound a part of bytes bytes gets when
// no timeout is set: 2 s plus the bytes at 64 MiB/s, at most 10 min.
func DerivedTimeout(bytes int64) time.Duration {
	d := timeoutFloor + time.Duration(float64(max(bytes, 0))/timeoutRateBPS*float64(time.Second))
	return min(d, maxCallDeadline)
}
