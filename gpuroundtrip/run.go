package gpuroundtrip

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"time"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/keys"
)

// cleanupTimeout bounds the owner's cleanup after the moves.
const cleanupTimeout = 30 * time.Second

// sentinel fills the fetching lender's pages before the fetch, so that a
// page the fetch must not touch can be seen untouched.
const sentinel = 0xEE

// Progress is told each step as it ends: the step ("publish", "fetch")
// and the blocks it delivered out of all.
type Progress func(step string, done, total int)

// Run moves one request's KV pages between two lenders on one device:
// the publisher's pages (filled with reproducible bytes) go to its
// staging slots and into the store; the fetcher fetches them into its
// own staging slots and copies to its pages the leading blocks that
// arrived in every layer; the pages are compared byte for byte. Both
// lenders then close in the owner's cleanup order.
//
// The device is a GPU or the host stand-in as cfg.GPU says; the report
// says which, and why not a GPU. An error means the round trip could not
// run to its end; a Report that is not OK means it ran and found
// something missing or wrong (a fault, a block not delivered, a byte
// that differs, memory kept).
func Run(ctx context.Context, cfg Config, progress Progress) (Report, error) {
	rep := Report{Config: cfg}
	if err := cfg.Validate(); err != nil {
		return rep, err
	}
	if progress == nil {
		progress = func(string, int, int) {}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	prefix, err := runPrefix(cfg.KeyPrefix)
	if err != nil {
		return rep, err
	}
	rep.KeyPrefix = prefix
	dev, noGPU, err := openDevice(cfg, log)
	if err != nil {
		return rep, err
	}
	defer dev.Close()
	rep.Device, rep.OnGPU, rep.NoGPU = dev.Name(), dev.OnGPU(), noGPU
	store := cfg.Store
	if store == nil {
		store = MemoryStore(cfg.Workers)
	}
	rep.Store = store.Describe()

	mctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	// Cleanup gets its own bound: attempts cancelled at the deadline must
	// still quiesce before their memory can go back.
	cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer ccancel()

	pub, err := openLender(mctx, "publisher", store, dev, cfg, prefix, log)
	if err != nil {
		return rep, err
	}
	fet, err := openLender(mctx, "fetcher", store, dev, cfg, prefix, log)
	if err != nil {
		return rep, errors.Join(err, pub.Close(cctx))
	}
	err = move(mctx, &rep, pub, fet, dev, progress)
	cerr := errors.Join(pub.Close(cctx), fet.Close(cctx))
	rep.Freed = cerr == nil
	return rep, errors.Join(err, cerr)
}

// openDevice opens the device cfg.GPU asks for; with GPUIfPresent, the
// stand-in when there is no GPU, and why.
func openDevice(cfg Config, log *slog.Logger) (dev Device, noGPU string, err error) {
	if cfg.GPU == GPUNever {
		return NewHostDevice(), "", nil
	}
	dev, err = OpenGPU(GPUOptions{Index: cfg.GPUIndex, CUDART: cfg.CUDART, Logger: log})
	switch {
	case err == nil:
		return dev, "", nil
	case cfg.GPU == GPURequired:
		return nil, "", fmt.Errorf("gpuroundtrip: a GPU is required: %w", err)
	}
	log.Info("gpuroundtrip: no GPU, running over the host stand-in", "why", err)
	return NewHostDevice(), err.Error(), nil
}

// openLender opens a lender over a driver of the store.
func openLender(ctx context.Context, name string, store Store, dev Device, cfg Config, prefix string, log *slog.Logger) (*Lender, error) {
	drv, err := store.OpenDriver(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("lender %s: %w", name, err)
	}
	return NewLender(ctx, LenderConfig{
		Name:       name,
		Device:     dev,
		Layers:     cfg.Layers,
		Blocks:     cfg.Blocks,
		BlockBytes: cfg.BlockBytes,
		Driver:     drv,
		Backend: binding.Config{
			KeyPrefix:       prefix,
			MaxRowsPerCall:  cfg.RowsPerCall,
			MaxBytesPerCall: cfg.BytesPerCall,
			Logger:          log,
		},
	})
}

// move fills the publisher's pages, publishes, fetches, and compares.
func move(ctx context.Context, rep *Report, pub, fet *Lender, dev Device, progress Progress) error {
	cfg := rep.Config
	size := int64(cfg.Layers*cfg.Blocks) * cfg.BlockBytes
	rows := cfg.Layers * cfg.Blocks
	want, err := dev.AllocHost(size)
	if err != nil {
		return fmt.Errorf("gpuroundtrip: pinned buffer: %w", err)
	}
	defer freeHost(dev, want)
	got, err := dev.AllocHost(size)
	if err != nil {
		return fmt.Errorf("gpuroundtrip: pinned buffer: %w", err)
	}
	defer freeHost(dev, got)

	fill(want, cfg.Seed)
	if err := pub.WritePages(want); err != nil {
		return err
	}
	for i := range got {
		got[i] = sentinel
	}
	if err := fet.WritePages(got); err != nil {
		return err
	}

	req := Request{ID: cfg.Seed}
	t, err := NewLeaseHolder(pub).Publish(ctx, req)
	rep.Publish = phase(t, rows, cfg.BlockBytes)
	if err != nil {
		return err
	}
	progress("publish", t.Delivered, rows)
	t, err = NewLeaseHolder(fet).Fetch(ctx, req)
	rep.Fetch = phase(t, rows, cfg.BlockBytes)
	rep.Prefixes, rep.Bound = t.Prefixes, t.Bound
	if err != nil {
		return err
	}
	progress("fetch", t.Delivered, rows)

	if err := fet.ReadPages(got); err != nil {
		return err
	}
	rep.Mismatches, rep.Overwritten = compare(want, got, cfg, rep.Bound)
	return nil
}

// phase is a Transfer as a report's Phase.
func phase(t Transfer, rows int, blockBytes int64) Phase {
	return Phase{
		Rows:      rows,
		Delivered: t.Delivered,
		Bytes:     int64(t.Delivered) * blockBytes,
		CopyBytes: t.CopyBytes,
		Copy:      t.Copy,
		Store:     t.Store,
		Fault:     t.Outcome.Fault,
	}
}

// compare counts the fetched pages below the bound that differ from the
// published ones, and the pages at or past it that are not the sentinel
// any more.
func compare(want, got []byte, cfg Config, bound int) (mismatches, overwritten int) {
	bb := int(cfg.BlockBytes)
	untouched := bytes.Repeat([]byte{sentinel}, bb)
	for layer := range cfg.Layers {
		for block := range cfg.Blocks {
			off := (layer*cfg.Blocks + block) * bb
			page := got[off : off+bb]
			switch {
			case block < bound && !bytes.Equal(page, want[off:off+bb]):
				mismatches++
			case block >= bound && !bytes.Equal(page, untouched):
				overwritten++
			}
		}
	}
	return mismatches, overwritten
}

// fill writes reproducible pseudo-random bytes into b.
func fill(b []byte, seed uint64) {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	_, _ = mrand.NewChaCha8(key).Read(b)
}

// runPrefix returns base/gpuroundtrip/<time>-<random>, checked as a key
// prefix.
func runPrefix(base string) (string, error) {
	if base == "" {
		base = "kvshare"
	}
	var random [4]byte
	_, _ = rand.Read(random[:]) // crypto/rand.Read never fails (Go 1.24+)
	prefix := base + "/gpuroundtrip/" + time.Now().UTC().Format("20060102t150405z") + "-" + hex.EncodeToString(random[:])
	if _, err := keys.NewStem(prefix); err != nil {
		return "", fmt.Errorf("%w: key prefix %q cannot start this run's keys: %w", ErrConfig, base, err)
	}
	return prefix, nil
}

// freeHost frees a pinned buffer never lent to a store; a failure can
// only leak it, so it is ignored.
func freeHost(dev Device, b []byte) { _ = dev.FreeHost(b) }
