// Command consumer-redis takes kvshare the way a team does: by version,
// only lender and the Redis driver (and contract, binding and hostmem,
// which they speak). Two lenders, each with a driver over one Redis
// server (its address in KVSHARE_REDIS_ADDR), round-trip rows through it
// — publish, look up, fetch — and every byte is compared. Each run writes
// under a key prefix of its own, so runs against the same server never
// read each other's rows.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/lender"
	"github.com/kvshare/kvshare/redisdrv"
)

// EnvAddr names the Redis server's host:port.
const EnvAddr = "KVSHARE_REDIS_ADDR"

// storeFile is the store file both lenders open: the run's key prefix
// and the server's address.
func storeFile(addr, prefix string) []byte {
	return fmt.Appendf(nil, "[blob]\nkey_prefix = %q\n\n[redis]\naddress = %q\n", prefix, addr)
}

// start runs the round trip against the server, each lender with a
// client of its own.
func start() error {
	addr := os.Getenv(EnvAddr)
	if addr == "" {
		return fmt.Errorf("%s is not set: set it to a Redis server's host:port (go run mage.go consumers starts one)", EnvAddr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prefix := fmt.Sprintf("consumer-redis/%d-%d", os.Getpid(), time.Now().UnixNano())
	sc, err := redisdrv.ParseStoreConfig("consumer-redis.toml", storeFile(addr, prefix))
	if err != nil {
		return err
	}
	open := func(ctx context.Context) (contract.Driver, error) {
		return redisdrv.OpenConfig(ctx, sc, slog.New(slog.DiscardHandler))
	}
	return run(ctx, open, binding.FromBlob(sc.Blob))
}

const (
	rows     = 64
	rowBytes = 64 << 10
)

// run lends two engines' memory over the drivers open opens, publishes
// every row from one, and in the other looks the rows up, fetches the
// prefix the store holds and compares every byte. Both lenders give
// everything back before it returns.
func run(ctx context.Context, open func(context.Context) (contract.Driver, error), cfg binding.Config) (err error) {
	o := lender.Options{Geometry: hostmem.Geometry{SlotBytes: rowBytes, SlotCount: rows}, Backend: cfg}
	publisher, err := lender.Open(ctx, open, o)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, publisher.Close(ctx)) }() // a *lender.Kept says what stays kept
	fetcher, err := lender.Open(ctx, open, o)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, fetcher.Close(ctx)) }()

	view := contract.View{Groups: []contract.Group{{Region: 0}}}
	g := &view.Groups[0]
	for i := range rows {
		g.Slots = append(g.Slots, int32(i))
		g.Names = append(g.Names, fmt.Appendf(nil, "block-%04d", i))
		slot := publisher.Slot(0, i)
		for j := range slot {
			slot[j] = byte(i*31 + j*7)
		}
	}
	a, err := publisher.Publish(view, nil)
	if err := settle(ctx, "publish", view, a, err); err != nil {
		return err
	}
	found, err := fetcher.Lookup(ctx, view, binding.LookupOptions{})
	if err != nil {
		return err
	}
	if found.Bound != rows {
		return fmt.Errorf("lookup: %d of %d rows present", found.Count(contract.Present), rows)
	}
	present := view.Cut(found.Bound)
	a, err = fetcher.Fetch(present, nil)
	if err := settle(ctx, "fetch", present, a, err); err != nil {
		return err
	}
	for i := range rows {
		if !bytes.Equal(publisher.Slot(0, i), fetcher.Slot(0, i)) {
			return fmt.Errorf("row %d differs after the round trip", i)
		}
	}
	return nil
}

// settle waits until the slots of a, the attempt submitting v made (or
// the error it refused v with), are the lender's again, and wants every
// row Ready.
func settle(ctx context.Context, step string, v contract.View, a contract.Attempt, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", step, err) // refused: nothing reached the store
	}
	out, err := contract.Settle(ctx, a)
	if ready := out.Count(contract.Ready); err != nil || ready != v.Rows() {
		return fmt.Errorf("%s: %d of %d rows (%v), fault %v, %v", step, ready, v.Rows(), out.Rows, out.Fault, err)
	}
	return nil
}

func main() {
	if err := start(); err != nil {
		fmt.Fprintln(os.Stderr, "consumer-redis:", err)
		os.Exit(1)
	}
	fmt.Printf("kvshare consumer: %d rows, %d bytes round-tripped, every byte identical\n", rows, rows*rowBytes)
}
