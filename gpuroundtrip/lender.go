package gpuroundtrip

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
)

// LenderConfig shapes a [Lender].
type LenderConfig struct {
	// Name names the lender in errors and logs.
	Name string
	// Device holds the lender's KV pages and allocates its pinned
	// staging memory. The lender does not close it.
	Device Device
	// Layers, Blocks and BlockBytes are the KV pages' shape: Layers ×
	// Blocks pages of BlockBytes each, and as many staging slots.
	Layers, Blocks int
	BlockBytes     int64
	// Driver is the store driver the staging slots are lent to. The
	// lender owns it from NewLender on, even when NewLender fails, and
	// closes it last (see [Lender.Close]).
	Driver contract.Driver
	// Backend configures the lender's backend (KeyPrefix is required).
	// Its Logger also receives the lender's records.
	Backend binding.Config
}

// Validate names the first field out of range, in an error wrapping
// [ErrConfig].
func (c LenderConfig) Validate() error {
	switch {
	case c.Device == nil:
		return fmt.Errorf("%w: lender %q: no device", ErrConfig, c.Name)
	case c.Driver == nil:
		return fmt.Errorf("%w: lender %q: no driver", ErrConfig, c.Name)
	}
	return checkShape(c.Layers, c.Blocks, c.BlockBytes)
}

// maxPagesBytes bounds one lender's pages (and so its staging): 1 TiB.
const maxPagesBytes = 1 << 40

// checkShape checks a pages shape.
func checkShape(layers, blocks int, blockBytes int64) error {
	switch {
	case layers <= 0:
		return fmt.Errorf("%w: layers is %d, want > 0", ErrConfig, layers)
	case blocks <= 0:
		return fmt.Errorf("%w: blocks is %d, want > 0", ErrConfig, blocks)
	case blockBytes <= 0:
		return fmt.Errorf("%w: block bytes is %d, want > 0", ErrConfig, blockBytes)
	case int64(layers) > math.MaxInt32/int64(blocks):
		return fmt.Errorf("%w: layers*blocks is over 2^31 slots (%d*%d)", ErrConfig, layers, blocks)
	case blockBytes > maxPagesBytes/int64(layers*blocks):
		return fmt.Errorf("%w: layers*blocks*block bytes is over 1 TiB (%d*%d*%d)", ErrConfig, layers, blocks, blockBytes)
	}
	return nil
}

// Lender stands in for an engine's KV cache manager on one device: KV
// pages in device memory, Layers × Blocks pages of BlockBytes, and one
// region of as many staging slots in pinned host memory, lent under a
// hold to a backend over its driver. Page (layer, block) is at offset
// (layer×Blocks + block)×BlockBytes of the pages, and slot
// layer×Blocks + block stages it: one copy moves a layer's run of
// blocks each way.
//
// The staging slots are lent to one lease holder at a time ([Lender.Lend]).
// A Lender is safe for concurrent use.
type Lender struct {
	name       string
	dev        Device
	layers     int
	blocks     int
	blockBytes int64
	log        *slog.Logger

	pages   uintptr // device memory
	staging []byte  // pinned host memory: the region lent to the store
	hold    *hold
	drv     contract.Driver
	backend *binding.Backend
	slots   chan struct{} // holds a token while the slots are free to lend

	closing   atomic.Bool // Close has begun: nothing more is lent
	closeOnce sync.Once
	closeErr  error
}

// NewLender allocates the pages and the staging slots on cfg.Device,
// lends the slots to cfg.Driver under the lender's hold
// ([binding.Bind]) and builds the backend over them ([binding.New]).
//
// On failure everything is given back that can be: the pages always; the
// staging memory and the driver (drained, then closed) only when the
// hold was released, so no registration can be live. Otherwise the
// error wraps [ErrKept] and the memory is kept for good.
func NewLender(ctx context.Context, cfg LenderConfig) (*Lender, error) {
	log := cfg.Backend.Logger
	if log == nil {
		log = slog.Default()
	}
	if err := cfg.Validate(); err != nil {
		return nil, errors.Join(err, closeDriver(ctx, cfg.Driver))
	}
	l := &Lender{
		name:       cfg.Name,
		dev:        cfg.Device,
		layers:     cfg.Layers,
		blocks:     cfg.Blocks,
		blockBytes: cfg.BlockBytes,
		log:        log,
		hold:       newHold(),
		drv:        cfg.Driver,
		slots:      make(chan struct{}, 1),
	}
	l.slots <- struct{}{}
	var err error
	if l.pages, err = l.dev.Alloc(l.size()); err != nil {
		return nil, l.fail(ctx, fmt.Errorf("pages: %w", err))
	}
	if l.staging, err = l.dev.AllocHost(l.size()); err != nil {
		return nil, l.fail(ctx, fmt.Errorf("staging: %w", err))
	}
	region := contract.SlotRegion{
		Base:      addrOf(l.staging),
		SlotBytes: l.blockBytes,
		SlotCount: l.layers * l.blocks,
		Len:       int64(len(l.staging)),
		Kind:      contract.Host,
	}
	regions, err := binding.Bind(l.drv, []contract.SlotRegion{region}, l.hold)
	if err != nil {
		return nil, l.fail(ctx, fmt.Errorf("bind: %w", err))
	}
	if l.backend, err = binding.New(regions, cfg.Backend); err != nil {
		if uerr := regions.Unbind(ctx); uerr != nil {
			err = fmt.Errorf("%w (and unbinding: %w)", err, uerr)
		}
		return nil, l.fail(ctx, err)
	}
	return l, nil
}

// fail gives back what a lender that never served holds, and returns
// err naming the lender.
func (l *Lender) fail(ctx context.Context, err error) error {
	err = fmt.Errorf("lender %s: %w", l.name, err)
	if l.pages != 0 {
		err = errors.Join(err, l.dev.Free(l.pages))
	}
	lent := l.staging != nil // Bind was reached; the hold says whether the lending is over
	if lent && !l.hold.Released() {
		return fmt.Errorf("%w: %w (a registration may be live: the staging memory and the driver are kept)", ErrKept, err)
	}
	if l.staging != nil {
		err = errors.Join(err, l.dev.FreeHost(l.staging))
	}
	return errors.Join(err, closeDriver(ctx, l.drv))
}

// closeDriver drains and closes a driver that has no region registered.
func closeDriver(ctx context.Context, d contract.Driver) error {
	if d == nil {
		return nil
	}
	if !d.Drain(ctx) {
		return fmt.Errorf("%w: the driver's drain did not prove every access ended; it is not closed", ErrKept)
	}
	return d.Close()
}

// size is the bytes of the pages, and of the staging slots.
func (l *Lender) size() int64 { return int64(l.layers*l.blocks) * l.blockBytes }

// Name returns the lender's name.
func (l *Lender) Name() string { return l.name }

// Shape returns the pages' shape: layers, blocks per layer, bytes a block.
func (l *Lender) Shape() (layers, blocks int, blockBytes int64) {
	return l.layers, l.blocks, l.blockBytes
}

// Backend returns the lender's backend.
func (l *Lender) Backend() *binding.Backend { return l.backend }

// Slot returns the staging slot of block in layer: layer×Blocks + block.
func (l *Lender) Slot(layer, block int) int { return layer*l.blocks + block }

// View returns the view of req over the lender's staging slots: one
// group per layer, in layer order, each the layer's blocks in block
// order, in slot layer×Blocks + block, named req.Name(layer, block).
func (l *Lender) View(req Request) contract.View {
	n := l.layers * l.blocks
	slots := make([]int32, n)
	names := make([][]byte, n)
	buf := make([]byte, 0, n*NameBytes)
	v := contract.View{Groups: make([]contract.Group, l.layers)}
	for layer := range l.layers {
		lo, hi := layer*l.blocks, (layer+1)*l.blocks
		for block := range l.blocks {
			slot := l.Slot(layer, block)
			slots[slot] = int32(slot)
			start := len(buf)
			buf = req.appendName(buf, layer, block)
			names[slot] = buf[start:len(buf):len(buf)]
		}
		v.Groups[layer] = contract.Group{Region: 0, Slots: slots[lo:hi:hi], Names: names[lo:hi:hi]}
	}
	return v
}

// WritePages copies src, the whole of the pages (Layers × Blocks ×
// BlockBytes bytes, page by page), into device memory: what an engine's
// forward pass would have written.
func (l *Lender) WritePages(src []byte) error {
	if int64(len(src)) != l.size() {
		return fmt.Errorf("%w: lender %s: WritePages of %d bytes, the pages are %d", ErrConfig, l.name, len(src), l.size())
	}
	if err := l.dev.CopyToDevice(l.pages, src); err != nil {
		return fmt.Errorf("lender %s: write pages: %w", l.name, err)
	}
	return l.dev.Synchronize()
}

// ReadPages copies the whole of the pages from device memory into dst.
func (l *Lender) ReadPages(dst []byte) error {
	if int64(len(dst)) != l.size() {
		return fmt.Errorf("%w: lender %s: ReadPages into %d bytes, the pages are %d", ErrConfig, l.name, len(dst), l.size())
	}
	if err := l.dev.CopyToHost(dst, l.pages); err != nil {
		return fmt.Errorf("lender %s: read pages: %w", l.name, err)
	}
	return l.dev.Synchronize()
}

// stageOut copies every page to its staging slot (device to host).
func (l *Lender) stageOut() error {
	if err := l.dev.CopyToHost(l.staging[:l.size()], l.pages); err != nil {
		return fmt.Errorf("lender %s: pages to staging: %w", l.name, err)
	}
	return l.dev.Synchronize()
}

// stageIn copies the first n blocks of every layer from their staging
// slots to their pages (host to device): one copy a layer.
func (l *Lender) stageIn(n int) error {
	if n <= 0 {
		return nil
	}
	run := int64(n) * l.blockBytes
	for layer := range l.layers {
		off := int64(l.Slot(layer, 0)) * l.blockBytes
		if err := l.dev.CopyToDevice(l.pages+uintptr(off), l.staging[off:off+run]); err != nil {
			return fmt.Errorf("lender %s: staging to pages, layer %d: %w", l.name, layer, err)
		}
	}
	return l.dev.Synchronize()
}

// Close follows the owner's cleanup order: the backend's Shutdown
// answers no labels (the binding has drained the driver, unregistered
// the region and released the hold), then the driver is closed, then the
// staging memory is freed, and the pages. From its start nothing more is
// lent ([ErrLenderClosed]), and it waits within ctx for a lease holder
// still at work to give the slots back. If Shutdown leaves anything held
// within ctx, the staging memory and the driver are kept for good; if a
// lease is still out, the memory the lease holder uses is kept too; the
// error, wrapping [ErrKept], says what. Close is idempotent.
func (l *Lender) Close(ctx context.Context) error {
	l.closing.Store(true)
	l.closeOnce.Do(func() { l.closeErr = l.close(ctx) })
	return l.closeErr
}

func (l *Lender) close(ctx context.Context) error {
	held := l.backend.Shutdown(ctx)
	// Take the slots back: a lease holder still copying between pages and
	// staging gives them back when done. With something still held the
	// lease may never come back; take it only if it is there.
	slots := false
	if len(held) == 0 {
		select {
		case <-l.slots:
			slots = true
		case <-ctx.Done():
		}
	} else {
		select {
		case <-l.slots:
			slots = true
		default:
		}
	}
	var err error
	switch {
	case len(held) > 0:
		err = fmt.Errorf("%w: lender %s: still held after shutdown: %s", ErrKept, l.name, strings.Join(held, ", "))
		l.log.Warn("gpuroundtrip: staging memory kept", "lender", l.name, "held", held)
	case !l.hold.Released():
		err = fmt.Errorf("%w: lender %s: the backend shut down without releasing the hold", ErrKept, l.name)
	default:
		if cerr := l.drv.Close(); cerr != nil {
			err = fmt.Errorf("lender %s: close driver: %w", l.name, cerr)
		}
		if !slots {
			return errors.Join(err, fmt.Errorf("%w: lender %s: a lease holder still holds the slots: %w", ErrKept, l.name, context.Cause(ctx)))
		}
		// The hold is released: no store can touch the staging memory.
		if ferr := l.dev.FreeHost(l.staging); ferr != nil {
			err = errors.Join(err, fmt.Errorf("lender %s: free staging: %w", l.name, ferr))
		}
	}
	if !slots {
		return errors.Join(err, fmt.Errorf("%w: lender %s: pages kept: a lease holder still holds the slots", ErrKept, l.name))
	}
	// The pages were never lent to a store: only lease holders use them.
	if ferr := l.dev.Free(l.pages); ferr != nil {
		err = errors.Join(err, fmt.Errorf("lender %s: free pages: %w", l.name, ferr))
	}
	return err
}
