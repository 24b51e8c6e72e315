package gpuroundtrip

import (
	"fmt"
	"log/slog"
	"time"
)

// GPUUse says whether a round trip's pages live on a GPU.
type GPUUse uint8

const (
	// GPUIfPresent (the zero value) uses a GPU when [OpenGPU] finds one,
	// else the host stand-in; the report says which, and why.
	GPUIfPresent GPUUse = iota
	// GPUNever uses the host stand-in.
	GPUNever
	// GPURequired uses a GPU, or fails saying why there is none.
	GPURequired
)

// String returns "if-present", "never" or "required".
func (u GPUUse) String() string {
	switch u {
	case GPUIfPresent:
		return "if-present"
	case GPUNever:
		return "never"
	case GPURequired:
		return "required"
	}
	return fmt.Sprintf("GPUUse(%d)", uint8(u))
}

// Config is one round trip's shape. The zero value is not usable; start
// from [Defaults].
type Config struct {
	// Layers, Blocks and BlockBytes shape each lender's pages: the
	// request is Layers × Blocks blocks of BlockBytes.
	Layers, Blocks int
	BlockBytes     int64
	// GPU says whether the pages live on a GPU; GPUIndex and CUDART say
	// which GPU and which runtime library ([GPUOptions]).
	GPU      GPUUse
	GPUIndex int
	CUDART   string
	// Store opens each lender's driver; nil means the embedded
	// in-memory store ([MemoryStore] with Workers).
	Store   Store
	Workers int
	// KeyPrefix is the base of the run's keys: each run stores under
	// KeyPrefix/gpuroundtrip/<time>-<random>, since a store that never
	// overwrites would serve a second run the first run's objects.
	KeyPrefix string
	// RowsPerCall and BytesPerCall cap one driver call of the backends;
	// 0 means no cap of the backend's own.
	RowsPerCall  int
	BytesPerCall int64
	// Timeout bounds the moves; cleanup has a bound of its own.
	Timeout time.Duration
	// Seed makes the pages' bytes reproducible; the request's ID too.
	Seed uint64
	// Logger receives the backends' and the runtime's records; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Defaults returns a shape that runs in a few seconds on a 2-core
// machine over the stand-in: 32 layers × 32 blocks of 64 KiB (64 MiB of
// pages each way), a GPU if present, the embedded in-memory store with
// two workers a driver, keys under kvshare/gpuroundtrip/<run>.
func Defaults() Config {
	return Config{
		Layers:     32,
		Blocks:     32,
		BlockBytes: 64 << 10,
		GPU:        GPUIfPresent,
		Workers:    2,
		KeyPrefix:  "kvshare",
		Timeout:    2 * time.Minute,
		Seed:       1,
	}
}

// Validate names the first field out of range, in an error wrapping
// [ErrConfig].
func (c Config) Validate() error {
	if err := checkShape(c.Layers, c.Blocks, c.BlockBytes); err != nil {
		return err
	}
	switch {
	case c.GPU > GPURequired:
		return fmt.Errorf("%w: GPU use is %v", ErrConfig, c.GPU)
	case c.GPUIndex < 0:
		return fmt.Errorf("%w: GPU index is %d, want >= 0", ErrConfig, c.GPUIndex)
	case c.Store == nil && c.Workers <= 0:
		return fmt.Errorf("%w: workers is %d, want > 0", ErrConfig, c.Workers)
	case c.RowsPerCall < 0:
		return fmt.Errorf("%w: rows per call is %d, want >= 0 (0: no cap)", ErrConfig, c.RowsPerCall)
	case c.BytesPerCall < 0:
		return fmt.Errorf("%w: bytes per call is %d, want >= 0 (0: no cap)", ErrConfig, c.BytesPerCall)
	case c.Timeout <= 0:
		return fmt.Errorf("%w: timeout is %v, want > 0", ErrConfig, c.Timeout)
	}
	return nil
}
