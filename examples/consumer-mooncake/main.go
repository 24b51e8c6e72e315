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
	backend *binding.Backend
}

func (l *lender) slot(i int) []byte { return l.mem[i*rowBytes : (i+1)*rowBytes] }

func lend(ctx context.Context, pool *fakesdk.Store) (*lender, error) {
	mem, err := syscall.Mmap(-1, 0, rows*rowBytes, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	driver, err := mooncakedrv.New(pool.Client(), mooncakedrv.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, errors.Join(err, syscall.Munmap(mem))
	}
	region := contract.SlotRegion{Base: uintptr(unsafe.Pointer(&mem[0])), SlotBytes: rowBytes, SlotCount: rows, Len: rows * rowBytes, Kind: contract.Host}
	l := &lender{mem: mem, hold: &hold{released: make(chan struct{})}}
	l.backend, err = binding.Open(ctx, binding.Loan{Regions: []contract.SlotRegion{region}, Hold: l.hold}, driver, binding.Config{KeyPrefix: "consumer"})
	if err != nil {
		select {
		case <-l.hold.released: // nothing stays lent
			return nil, errors.Join(err, syscall.Munmap(mem))
		default: // a registration may be live: keep the memory
			return nil, err
		}
	}
	return l, nil
}

func (l *lender) close(ctx context.Context) error {
	if err := l.backend.Close(ctx); err != nil {
		return err // still held: keep the memory
	}
	return syscall.Munmap(l.mem)
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool := fakesdk.New(fakesdk.Options{})
	publisher, err := lend(ctx, pool)
	if err != nil {
		return err
	}
	fetcher, err := lend(ctx, pool)
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
		fmt.Fprintln(os.Stderr, "consumer-mooncake:", err)
		os.Exit(1)
	}
}
