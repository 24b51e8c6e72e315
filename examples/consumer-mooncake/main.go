// Command consumer-mooncake takes kvshare the way a team does: by
// version, only binding and the Mooncake driver. Two lenders, each with a
// client of one Mooncake pool (here mooncakesdk/fakesdk's in-memory
// pool, which keeps Mooncake's semantics), round-trip rows through it,
// and every byte is compared.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"
	"unsafe"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

const (
	rows     = 64
	rowBytes = 64 << 10
)

// hold is the lender's side of the hold: Release is called once no store
// can touch the memory.
type hold struct{ released chan struct{} }

func (h *hold) Release() { close(h.released) }

// lender is one engine's staging memory (an anonymous mapping, outside
// the Go heap) lent to a backend over a Mooncake driver.
type lender struct {
	mem     []byte
	hold    *hold
	driver  *mooncakedrv.Driver
	backend *binding.Backend
}

func (l *lender) slot(i int) []byte { return l.mem[i*rowBytes : (i+1)*rowBytes] }

func lend(pool *fakesdk.Store) (*lender, error) {
	mem, err := syscall.Mmap(-1, 0, rows*rowBytes, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	driver, err := mooncakedrv.New(pool.Client(), mooncakedrv.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, errors.Join(err, syscall.Munmap(mem))
	}
	region := contract.SlotRegion{Base: uintptr(unsafe.Pointer(&mem[0])), SlotBytes: rowBytes, SlotCount: rows, Len: rows * rowBytes, Kind: contract.Host}
	l := &lender{mem: mem, hold: &hold{released: make(chan struct{})}, driver: driver}
	regions, err := binding.Bind(driver, []contract.SlotRegion{region}, l.hold)
	if errors.Is(err, contract.ErrConstructionRejected) {
		return nil, errors.Join(err, driver.Close(), syscall.Munmap(mem))
	}
	if err != nil {
		return nil, err // a registration may be live: keep the memory and the driver
	}
	if l.backend, err = binding.New(regions, binding.Config{KeyPrefix: "consumer"}); err != nil {
		return nil, errors.Join(err, regions.Unbind(context.Background()))
	}
	return l, nil
}

func (l *lender) close(ctx context.Context) error {
	if held := l.backend.Shutdown(ctx); len(held) > 0 {
		return fmt.Errorf("still held, memory kept: %v", held)
	}
	<-l.hold.released
	if err := l.driver.Close(); err != nil {
		return err
	}
	return syscall.Munmap(l.mem)
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
	pool := fakesdk.New(fakesdk.Options{})
	publisher, err := lend(pool)
	if err != nil {
		return err
	}
	fetcher, err := lend(pool)
	if err != nil {
		return err
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
	if out, err := settle(publisher.backend.Publish(view, nil)); err != nil || out.Prefix() != rows {
		return fmt.Errorf("publish: %d of %d rows, fault %v", out.Prefix(), rows, err)
	}
	out, err := settle(fetcher.backend.Fetch(view, nil))
	if err != nil || out.Prefix() != rows {
		return fmt.Errorf("fetch: %d of %d rows, fault %v", out.Prefix(), rows, err)
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
		fmt.Fprintln(os.Stderr, "consumer-mooncake:", err)
		os.Exit(1)
	}
}
