package binding

import (
	"cmp"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/rowbatch"
	"github.com/kvshare/kvshare/storeconfig"
)

// DefaultSlowCall is how long a driver call runs before the backend logs
// it, when [Config.SlowCall] is 0.
const DefaultSlowCall = 60 * time.Second

// Config is what [New] and [Open] build a backend from. The zero value
// is usable: every store key starts with storeconfig.DefaultKeyPrefix, no
// cap of the backend's own, the default logger and slow-call log.
// [FromBlob] makes one from a store file's [blob] and [scope] sections.
type Config struct {
	// KeyPrefix starts every store key; keys.NewStem checks it. Empty
	// means storeconfig.DefaultKeyPrefix ("kvshare").
	KeyPrefix string
	// Scope, when not the zero Scope, is the scope every key is made
	// under (keys.NewScopedStem): engines of another scope never meet
	// this backend's keys. The zero Scope makes today's unscoped keys
	// (keys.NewStem). An invalid scope is refused, naming the field.
	Scope keys.Scope
	// MaxRowsPerCall caps the rows of one driver call; 0 means no cap of
	// the backend's own. The driver's MaxRowsPerOp applies as well; the
	// tighter cap wins.
	MaxRowsPerCall int
	// MaxBytesPerCall caps the slot bytes of one driver call; 0 means no
	// cap. A row larger than the cap still goes, alone.
	MaxBytesPerCall int64
	// Wake, if not nil, is called after an attempt's outcome or
	// quiescence is published, outside any lock, from whichever goroutine
	// published it (a driver's worker, or a submitter). It must not block.
	Wake func()
	// Logger receives the backend's warnings; nil means slog.Default().
	Logger *slog.Logger
	// SlowCall is how long a driver call runs before it is logged, once;
	// 0 means DefaultSlowCall, a negative value turns the log off.
	SlowCall time.Duration
	// ReclaimAbove, when above 0, makes the backend reclaim by itself
	// ([Backend.Reclaim], on a goroutine of its own, within ReclaimWait)
	// once the bytes of calls held as unprovable reach it; one reclaim
	// at a time. It needs a driver that is a [contract.Recycler]; with
	// another driver it is refused. 0 means never.
	ReclaimAbove int64
	// ReclaimWait bounds each reclaim ReclaimAbove starts; 0 means
	// DefaultReclaimWait.
	ReclaimWait time.Duration
}

// DefaultReclaimWait bounds a reclaim [Config.ReclaimAbove] starts, when
// [Config.ReclaimWait] is 0: longer than the store's own 60 s cap on a
// transfer, so the calls inside it have returned by then.
const DefaultReclaimWait = 90 * time.Second

// Backend is the blob backend: a [contract.Backend] over the driver of a
// [Regions]. See the package documentation for what it promises.
//
// All methods are safe for concurrent use.
type Backend struct {
	regions *Regions
	drv     contract.Driver
	caps    contract.Capabilities
	stem    keys.Stem
	keys    contract.KeyMaker // stem, boxed once: every call's Keys
	cut     rowbatch.Caps
	wake    func()
	log     *slog.Logger
	slow    time.Duration
	slots   slotSets
	scratch scratchPool

	mu         sync.Mutex
	nextID     uint64
	attempts   int64
	open       map[*attempt]struct{} // attempts not quiesced
	rows       [contract.RowStatusCount]int64
	dirRows    [3][contract.RowStatusCount]int64 // by direction (fetch, publish)
	flight     flightList                        // calls started, access still open
	unprovable int64
	rowsLent   int64
	bytesLent  int64
	violation  *ViolationError
	closing    bool // Shutdown was called
	// handingBack: the retiring goroutine saw no attempt open, no lookup
	// in flight and no reclaim under way, and drains, unbinds and
	// releases; from then on only it (and Close, last) calls the driver.
	handingBack bool
	stuck       string // why the hold can never be released by the binding, or ""
	released    bool   // the hold was released
	closed      chan struct{}
	changed     chan struct{} // closed and replaced when waiters should look again
	waiting     bool          // someone holds changed
	slowTimer   *time.Timer
	slowArmed   bool
	// retiring says the retiring goroutine runs. The goroutine clears it
	// in the same critical section in which it decides to stop, so
	// whoever reads it false under the lock knows nobody will retire the
	// regions unless it starts the goroutine again (see reclaimEndedLocked).
	retiring bool
	// retireStopped, set only by tests, runs when the retiring goroutine
	// has decided to stop and unlocked: where a give-back once found the
	// flag still set.
	retireStopped func()
	reclaim       reclaimState

	lookups, lookupNames, lookupPresent int64     // Lookup's counts
	lookupsIn                           int       // lookups in flight: between their admission and their answer
	cutters                             sync.Pool // *rowbatch.Cutter, for Lookup

	owned *ownedDriver // made by Open: Close closes the driver, last
}

var _ contract.Backend = (*Backend)(nil)

// check returns the key stem cfg makes, or why cfg builds no backend.
func (cfg Config) check() (keys.Stem, error) {
	stem, err := keys.NewStem(cmp.Or(cfg.KeyPrefix, storeconfig.DefaultKeyPrefix))
	if err != nil {
		return keys.Stem{}, fmt.Errorf("%w: KeyPrefix: %w", ErrConfig, err)
	}
	if !cfg.Scope.IsZero() {
		if stem, err = keys.NewScopedStem(stem.Prefix(), cfg.Scope); err != nil {
			return keys.Stem{}, fmt.Errorf("%w: Scope: %w", ErrConfig, err)
		}
	}
	if cfg.MaxRowsPerCall < 0 {
		return keys.Stem{}, fmt.Errorf("%w: MaxRowsPerCall is %d, want >= 0", ErrConfig, cfg.MaxRowsPerCall)
	}
	if cfg.MaxBytesPerCall < 0 {
		return keys.Stem{}, fmt.Errorf("%w: MaxBytesPerCall is %d, want >= 0", ErrConfig, cfg.MaxBytesPerCall)
	}
	if cfg.ReclaimAbove < 0 {
		return keys.Stem{}, fmt.Errorf("%w: ReclaimAbove is %d, want >= 0 (0: never)", ErrConfig, cfg.ReclaimAbove)
	}
	if cfg.ReclaimWait < 0 {
		return keys.Stem{}, fmt.Errorf("%w: ReclaimWait is %v, want >= 0 (0: %v)", ErrConfig, cfg.ReclaimWait, DefaultReclaimWait)
	}
	return stem, nil
}

// Driver returns the driver the backend hands its calls to, as
// database/sql's DB.Driver does: for the driver's own figures
// (telemetry), not for calls of one's own into it.
func (b *Backend) Driver() contract.Driver { return b.drv }

// Key returns the store key the backend makes of a row's name (its key
// prefix's stem): what a store's tools and memdrv's scenario hooks, which
// take keys, need to name a row, e.g. driver.FailReads(b.Key(name)).
func (b *Backend) Key(name []byte) (string, error) { return b.stem.Key(name) }

// FromBlob is the Config a store file's [blob] and [scope] sections ask
// for: its key prefix (the default when it leaves it out), its caps and
// its scope (none when it has no [scope]). The other fields are left for
// the caller to set.
func FromBlob(b storeconfig.Blob) Config {
	return Config{KeyPrefix: b.WithDefaults().KeyPrefix, Scope: b.Scope, MaxRowsPerCall: b.RowsPerCall, MaxBytesPerCall: b.BytesPerCall}
}

// New builds a backend over r. The backend owns r from now on: it
// unregisters its regions and releases its hold after Shutdown, once
// every attempt has quiesced. New fails with an error wrapping
// [ErrConfig] (a bad key prefix, a negative cap, nil regions, or regions
// another backend owns or on which Unbind was called); then nothing
// changed and r is still the caller's to unbind.
func New(r *Regions, cfg Config) (*Backend, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: no regions", ErrConfig)
	}
	stem, err := cfg.check()
	if err != nil {
		return nil, err
	}
	if _, ok := r.drv.(contract.Recycler); cfg.ReclaimAbove > 0 && !ok {
		return nil, fmt.Errorf("%w: ReclaimAbove is %d, but the driver (%T) is no contract.Recycler", ErrConfig, cfg.ReclaimAbove, r.drv)
	}
	r.mu.Lock()
	switch {
	case r.owned:
		r.mu.Unlock()
		return nil, fmt.Errorf("%w: the regions already belong to a backend", ErrConfig)
	case r.unbinding:
		r.mu.Unlock()
		return nil, fmt.Errorf("%w: Unbind was called on the regions", ErrConfig)
	}
	r.owned = true
	r.mu.Unlock()

	caps := r.caps
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	slow := cfg.SlowCall
	if slow == 0 {
		slow = DefaultSlowCall
	}
	driverCap := rowbatch.Caps{MaxRows: max(caps.MaxRowsPerOp, 0)}
	b := &Backend{
		regions: r,
		drv:     r.drv,
		caps:    caps,
		stem:    stem,
		keys:    stem,
		cut:     driverCap.Tighter(rowbatch.Caps{MaxRows: cfg.MaxRowsPerCall, MaxBytes: cfg.MaxBytesPerCall}),
		wake:    cfg.Wake,
		log:     log,
		slow:    slow,
		reclaim: reclaimState{turn: newTurn(), above: cfg.ReclaimAbove, wait: cmp.Or(cfg.ReclaimWait, DefaultReclaimWait)},
		open:    make(map[*attempt]struct{}),
		closed:  make(chan struct{}),
		changed: make(chan struct{}),
	}
	b.slots.init(r)
	return b, nil
}

// Regions returns the binding the backend owns.
func (b *Backend) Regions() *Regions { return b.regions }

// Closed returns a channel closed once the backend has released the
// lender's hold: after Shutdown, every attempt quiesced, the driver
// drained and every region confirmed unregistered. It is never closed
// while any slot may still be touched (an unprovable call keeps it open
// for good). The owner closes the driver only after this.
func (b *Backend) Closed() <-chan struct{} { return b.closed }

// Fetch starts moving the view's rows from the store into their slots.
// See [contract.Backend.Fetch]; the hint reaches every get and must be
// nil unless the driver declares Hints.
func (b *Backend) Fetch(v contract.View, h contract.Hint) (contract.Attempt, error) {
	return b.submit(fetch, v, h, nil, time.Time{})
}

// Publish starts moving the view's rows from their slots into the store.
// See [contract.Backend.Publish]; the destination must be nil.
func (b *Backend) Publish(v contract.View, d contract.Destination) (contract.Attempt, error) {
	return b.submit(publish, v, nil, d, time.Time{})
}

// rejectedLocked returns why the backend takes no submission now, or nil.
func (b *Backend) rejectedLocked() error {
	switch {
	case b.violation != nil:
		return fmt.Errorf("%w: %w", contract.ErrSubmissionRejected, b.violation)
	case b.closing:
		return fmt.Errorf("%w: the backend was shut down", contract.ErrSubmissionRejected)
	}
	return nil
}

func (b *Backend) submit(dir direction, v contract.View, h contract.Hint, d contract.Destination, deadline time.Time) (contract.Attempt, error) {
	b.mu.Lock()
	err := b.rejectedLocked()
	b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	nameBytes, err := b.validate(dir, v, h, d)
	if err != nil {
		return nil, err
	}
	a := newAttempt(b, dir, v, h, nameBytes)
	b.mu.Lock()
	if err := b.rejectedLocked(); err != nil {
		b.scratch.put(a.s)
		b.mu.Unlock()
		return nil, err
	}
	b.nextID++
	a.id = b.nextID
	b.attempts++
	b.open[a] = struct{}{}
	published := b.armDeadlineLocked(a, deadline)
	b.mu.Unlock()
	b.callWake(published)
	b.handOver(a)
	return a, nil
}

// broadcastLocked wakes everyone waiting on changed.
func (b *Backend) broadcastLocked() {
	if b.waiting {
		close(b.changed)
		b.changed = make(chan struct{})
		b.waiting = false
	}
}

// changedLocked returns the channel closed at the next broadcast.
func (b *Backend) changedLocked() <-chan struct{} {
	b.waiting = true
	return b.changed
}

func (b *Backend) callWake(published bool) {
	if published && b.wake != nil {
		b.wake()
	}
}
