package node

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/storeconfig"
)

// ErrConfig is wrapped by [New]'s refusal of a config; the error names
// the field.
var ErrConfig = errors.New("kvshare/node: bad config")

// The limits a zero field of [Config] stands for.
const (
	DefaultMaxFrame     = 4 << 20  // a 4,096-row publish with 512-byte names takes about 2.1 MiB
	DefaultMaxAttempts  = 64       // publishes, fetches and lookups in flight, per engine
	DefaultMaxRows      = 8192     // rows of one publish, fetch or lookup
	DefaultMaxLendBytes = 64 << 30 // bytes lent by one engine, every lend together
	DefaultMaxRegions   = 1024     // regions of one lend
	DefaultOutQueue     = 1024     // frames waiting for an engine to read them
	DefaultEngineWait   = 10 * time.Second
	DefaultReclaimWait  = 90 * time.Second // as binding's: a recycle waits for the rows inside the store
	DefaultMode         = os.FileMode(0o600)
)

// Config is what [New] builds a node from. Only Driver is required;
// every zero limit means its default.
type Config struct {
	// Driver is the node's one store driver, shared by every engine: each
	// lend binds through a view of its own over it. The caller opened it
	// and closes it, after [Node.Shutdown] returned nothing held.
	Driver contract.Driver
	// KeyPrefix starts every store key the node's backends and lookups
	// make; empty means storeconfig.DefaultKeyPrefix.
	KeyPrefix string
	// MaxRowsPerCall and MaxBytesPerCall cap one driver call of a lend's
	// backend (binding.Config's fields of the same names); 0: no cap.
	MaxRowsPerCall  int
	MaxBytesPerCall int64
	// Socket is the path ListenAndServe creates the socket at.
	Socket string
	// Mode is the socket file's mode; 0 means 0600 (the node's own user).
	Mode os.FileMode
	// AllowUIDs are the user ids whose processes may attach (checked with
	// SO_PEERCRED before anything is read); empty means only the node's
	// own user.
	AllowUIDs []uint32
	// MaxFrame caps the body of one incoming frame, in bytes.
	MaxFrame uint32
	// MaxAttempts caps an engine's publishes, fetches and lookups in
	// flight: a publish or fetch from its acceptance until it quiesces,
	// a lookup until its answer.
	MaxAttempts int
	// MaxRows caps the rows of one publish, fetch or lookup.
	MaxRows int
	// MaxLendBytes caps the bytes one engine lends, every lend together
	// (those it returned that the node still keeps included).
	MaxLendBytes int64
	// MaxRegions caps the regions of one lend.
	MaxRegions int
	// OutQueue is how many frames may wait for an engine to read them;
	// an engine that lets it fill is disconnected (SlowReader).
	OutQueue int
	// EngineWait bounds how long the end of an engine, and a return,
	// wait for a lend's access to end before the node keeps the lend
	// (mapped, counted) and goes on finishing it in the background.
	EngineWait time.Duration
	// ReclaimAbove starts a reclaim ([Node.Reclaim]) on its own once the
	// bytes of the lends the node keeps (HeldBytes: lends an engine
	// returned or left while access could not be proven ended) reach it,
	// each try bounded by ReclaimWait; 0, the default, means never. A
	// reclaim recycles the store client every engine shares, so the node
	// disturbs its engines only for memory worth that.
	ReclaimAbove int64
	// ReclaimWait bounds each automatic reclaim.
	ReclaimWait time.Duration
	// RequireScope refuses a hello without a scope (CodeScopeUnsupported):
	// every session's keys are then made under a scope its engine
	// declared. Left false, an unscoped session's keys are the node's
	// KeyPrefix alone, as before scopes, and its tenant is "".
	RequireScope bool
	// Tenants says which peers may declare which tenant in their scope,
	// and each tenant's limits; a scope naming a tenant that is not
	// listed, or listed without the peer, is refused at the hello
	// (CodeTenantNotAllowed). The tenant "" (no tenant named) needs no
	// entry: every peer on AllowUIDs may declare it, with no tenant
	// limits, unless an entry of its own says otherwise.
	Tenants []Tenant
	// Events, when set, is told which blocks the node stored and which it
	// found absent (module events publishes them to KV-aware routers);
	// nil, the default, tells no one.
	Events Events
	// Logger receives the node's log; nil means slog.Default().
	Logger *slog.Logger
}

// withDefaults returns cfg with every zero limit set, or why it builds
// no node.
func (cfg Config) withDefaults() (Config, keys.Stem, error) {
	if cfg.Driver == nil {
		return cfg, keys.Stem{}, fmt.Errorf("%w: Driver is nil", ErrConfig)
	}
	if cfg.KeyPrefix == "" {
		cfg.KeyPrefix = storeconfig.DefaultKeyPrefix
	}
	stem, err := keys.NewStem(cfg.KeyPrefix)
	if err != nil {
		return cfg, keys.Stem{}, fmt.Errorf("%w: KeyPrefix: %w", ErrConfig, err)
	}
	for _, f := range []struct {
		name string
		neg  bool
	}{
		{"MaxRowsPerCall", cfg.MaxRowsPerCall < 0},
		{"MaxBytesPerCall", cfg.MaxBytesPerCall < 0},
		{"MaxAttempts", cfg.MaxAttempts < 0},
		{"MaxRows", cfg.MaxRows < 0},
		{"MaxLendBytes", cfg.MaxLendBytes < 0},
		{"MaxRegions", cfg.MaxRegions < 0},
		{"OutQueue", cfg.OutQueue < 0},
		{"EngineWait", cfg.EngineWait < 0},
		{"ReclaimAbove", cfg.ReclaimAbove < 0},
		{"ReclaimWait", cfg.ReclaimWait < 0},
	} {
		if f.neg {
			return cfg, keys.Stem{}, fmt.Errorf("%w: %s is negative", ErrConfig, f.name)
		}
	}
	if err := checkTenants(cfg.Tenants); err != nil {
		return cfg, keys.Stem{}, err
	}
	if cfg.Mode&^os.ModePerm != 0 {
		return cfg, keys.Stem{}, fmt.Errorf("%w: Mode %v has bits beyond the permission bits", ErrConfig, cfg.Mode)
	}
	if cfg.MaxFrame != 0 && cfg.MaxFrame < minFrame {
		return cfg, keys.Stem{}, fmt.Errorf("%w: MaxFrame is %d, want at least %d", ErrConfig, cfg.MaxFrame, minFrame)
	}
	set := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	set(&cfg.MaxAttempts, DefaultMaxAttempts)
	set(&cfg.MaxRows, DefaultMaxRows)
	set(&cfg.MaxRegions, DefaultMaxRegions)
	set(&cfg.OutQueue, DefaultOutQueue)
	if cfg.MaxFrame == 0 {
		cfg.MaxFrame = DefaultMaxFrame
	}
	if cfg.MaxLendBytes == 0 {
		cfg.MaxLendBytes = DefaultMaxLendBytes
	}
	if cfg.EngineWait == 0 {
		cfg.EngineWait = DefaultEngineWait
	}
	if cfg.ReclaimWait == 0 {
		cfg.ReclaimWait = DefaultReclaimWait
	}
	if cfg.Mode == 0 {
		cfg.Mode = DefaultMode
	}
	if len(cfg.AllowUIDs) == 0 {
		cfg.AllowUIDs = []uint32{uint32(os.Getuid())}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg, stem, nil
}

// minFrame is the least MaxFrame a node takes: room for the largest
// hello (the longest engine name and a scope of 65,535 bytes), which an
// engine sends before it learns the node's limit.
const minFrame = 2 + 2 + nodewire.MaxEngineName + 2 + math.MaxUint16
