// Command consumer-memdrv takes kvshare the way a team does: by version,
// only binding and memdrv (and contract, which both speak). Two lenders
// share kvshare's embedded in-memory store; one publishes rows, the
// other fetches them into its own slots, and every byte is compared.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

const (
	rows     = 64
	rowBytes = 64 << 10
)

// hold is the lender's side of the hold: Release is called once no store
// can touch the memory.
type hold chan struct{}

func (h hold) Release() { close(h) }

// lender is one engine's staging memory lent to a backend.
type lender struct {
	mem     *memdrv.Memory
	driver  *memdrv.Driver
	backend *binding.Backend
}

func lend(store *memdrv.Store) (*lender, error) {
	mem, err := memdrv.Alloc(rowBytes, rows, contract.Host)
	if err != nil {
		return nil, err
	}
	driver := memdrv.New(store, memdrv.Options{})
	regions, err := binding.Bind(driver, []contract.SlotRegion{mem.Region}, make(hold))
	if errors.Is(err, contract.ErrConstructionRejected) {
		return nil, errors.Join(err, mem.Free()) // nothing registered, hold released
	}
	if err != nil {
		return nil, err // a registration may be live: keep the memory
	}
	backend, err := binding.New(regions, binding.Config{KeyPrefix: "consumer"})
	if err != nil {
		if uerr := regions.Unbind(context.Background()); uerr != nil {
			return nil, errors.Join(err, uerr)
		}
		return nil, errors.Join(err, mem.Free())
	}
	return &lender{mem: mem, driver: driver, backend: backend}, nil
}

func (l *lender) close(ctx context.Context) error {
	if held := l.backend.Shutdown(ctx); len(held) > 0 {
		return fmt.Errorf("still held, memory kept: %v", held)
	}
	if err := l.driver.Close(); err != nil {
		return err
	}
	return l.mem.Free()
}

// settle waits for an attempt's quiescence and returns its outcome.
func settle(a contract.Attempt, err error) (contract.Outcome, error) {
	if err != nil {
		return contract.Outcome{}, err
	}
	<-a.Done()
	out, _ := a.Outcome()
	return out, out.Fault
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store := memdrv.NewStore()
	publisher, err := lend(store)
	if err != nil {
		return err
	}
	fetcher, err := lend(store)
	if err != nil {
		return err
	}
	view := contract.View{Groups: []contract.Group{{Region: 0}}}
	g := &view.Groups[0]
	for i := range rows {
		g.Slots = append(g.Slots, int32(i))
		g.Names = append(g.Names, fmt.Appendf(nil, "block-%04d", i))
		slot := publisher.mem.Slot(i)
		for j := range slot {
			slot[j] = byte(i*31 + j*7)
		}
	}
	if out, err := settle(publisher.backend.Publish(view, nil)); err != nil || out.Prefix() != rows {
		return fmt.Errorf("publish: %d of %d rows, fault %v", out.Prefix(), rows, err)
	}
	out, err := settle(fetcher.backend.Fetch(view, nil))
	if err != nil || out.Prefix() != rows {
		return fmt.Errorf("fetch: %d of %d rows, fault %v", out.Prefix(), rows, err)
	}
	for i := range rows {
		if !bytes.Equal(publisher.mem.Slot(i), fetcher.mem.Slot(i)) {
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
		fmt.Fprintln(os.Stderr, "consumer-memdrv:", err)
		os.Exit(1)
	}
}
