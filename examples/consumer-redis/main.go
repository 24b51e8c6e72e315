// Command consumer-redis takes kvshare the way a team does: by version,
// only binding, hostmem and the Redis driver (and contract, which they
// speak). Two lenders, each with a driver over one Redis server (its
// address in KVSHARE_REDIS_ADDR), round-trip rows through it, and every
// byte is compared. Each run writes under a key prefix of its own, so
// runs against the same server never read each other's rows.
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
	"github.com/kvshare/kvshare/redisdrv"
)

// EnvAddr names the Redis server's host:port.
const EnvAddr = "KVSHARE_REDIS_ADDR"

const (
	rows     = 64
	rowBytes = 64 << 10
)

// lender is one engine's staging memory lent to a backend over a Redis
// driver, under a hold of its own on hostmem's memory.
type lender struct {
	mem     *hostmem.Memory
	backend *binding.Backend
}

func (l *lender) slot(i int) []byte { return l.mem.Slot(0, i) }

// storeFile is the store file both lenders open: the run's key prefix
// and the server's address.
func storeFile(addr, prefix string) []byte {
	return fmt.Appendf(nil, "[blob]\nkey_prefix = %q\n\n[redis]\naddress = %q\n", prefix, addr)
}

func lend(ctx context.Context, sc redisdrv.StoreConfig) (*lender, error) {
	mem, err := hostmem.Map(hostmem.Geometry{SlotBytes: rowBytes, SlotCount: rows}, hostmem.Options{})
	if err != nil {
		return nil, err
	}
	hold, err := mem.Hold() // the loan's own hold: Free waits for its release
	if err != nil {
		return nil, err // refused only for memory already freed
	}
	driver, err := redisdrv.OpenConfig(ctx, sc, slog.New(slog.DiscardHandler))
	if err != nil {
		hold.Release() // never lent
		return nil, errors.Join(err, mem.Free())
	}
	backend, err := binding.Open(ctx, binding.Loan{Regions: mem.Regions(), Hold: hold}, driver, binding.FromBlob(sc.Blob))
	if err != nil {
		return nil, errors.Join(err, mem.Free()) // Free refuses memory still lent
	}
	return &lender{mem: mem, backend: backend}, nil
}

func (l *lender) close(ctx context.Context) error {
	if err := l.backend.Close(ctx); err != nil {
		return err // still held: keep the memory
	}
	return l.mem.Free()
}

func run() error {
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
	publisher, err := lend(ctx, sc)
	if err != nil {
		return err
	}
	fetcher, err := lend(ctx, sc)
	if err != nil {
		return errors.Join(err, publisher.close(ctx))
	}
	view := contract.View{Groups: []contract.Group{{Region: 0}}}
	g := &view.Groups[0]
	for i := range rows {
		g.Slots = append(g.Slots, int32(i))
		g.Names = append(g.Names, fmt.Appendf(nil, "block-%04d", i))
		slot := publisher.slot(i)
		for j := range slot {
			slot[j] = byte(i*31 + j*7)
		}
	}
	for _, step := range []struct {
		name   string
		submit func() (contract.Attempt, error)
	}{
		{"publish", func() (contract.Attempt, error) { return publisher.backend.Publish(view, nil) }},
		{"fetch", func() (contract.Attempt, error) { return fetcher.backend.Fetch(view, nil) }},
	} {
		a, err := step.submit()
		if err != nil {
			return err
		}
		out, err := a.Wait(ctx)
		if err != nil || view.ResumeBound(out) != rows {
			return fmt.Errorf("%s: %d of %d rows (%v), fault %v, %v", step.name, view.ResumeBound(out), rows, out.Rows, out.Fault, err)
		}
		<-a.Done() // quiesced: the slots are the lender's again
	}
	for i := range rows {
		if !bytes.Equal(publisher.slot(i), fetcher.slot(i)) {
			return fmt.Errorf("row %d differs after the round trip", i)
		}
	}
	if err := errors.Join(publisher.close(ctx), fetcher.close(ctx)); err != nil {
		return err
	}
	fmt.Printf("kvshare consumer: %d rows, %d bytes round-tripped, every byte identical\n", rows, rows*rowBytes)
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "consumer-redis:", err)
		os.Exit(1)
	}
}
