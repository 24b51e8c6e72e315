// Command consumer-memdrv takes kvshare the way a team does: by version,
// only binding, memdrv and hostmem (and contract, which they speak). Two lenders
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
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/memdrv"
)

const (
	rows     = 64
	rowBytes = 64 << 10
)

// lender is one engine's staging memory lent to a backend, under a hold
// of its own on hostmem's memory.
type lender struct {
	mem     *hostmem.Memory
	backend *binding.Backend
}

func lend(ctx context.Context, store *memdrv.Store) (*lender, error) {
	mem, err := hostmem.Map(hostmem.Geometry{SlotBytes: rowBytes, SlotCount: rows}, hostmem.Options{})
	if err != nil {
		return nil, err
	}
	hold, err := mem.Hold() // the loan's own hold: Free waits for its release
	if err != nil {
		return nil, err // refused only for memory already freed
	}
	loan := binding.Loan{Regions: mem.Regions(), Hold: hold}
	backend, err := binding.Open(ctx, loan, memdrv.New(store, memdrv.Options{}), binding.Config{KeyPrefix: "consumer"})
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store := memdrv.NewStore()
	publisher, err := lend(ctx, store)
	if err != nil {
		return err
	}
	fetcher, err := lend(ctx, store)
	if err != nil {
		return err
	}
	view := contract.View{Groups: []contract.Group{{Region: 0}}}
	g := &view.Groups[0]
	for i := range rows {
		g.Slots = append(g.Slots, int32(i))
		g.Names = append(g.Names, fmt.Appendf(nil, "block-%04d", i))
		slot := publisher.mem.Slot(0, i)
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
		if !bytes.Equal(publisher.mem.Slot(0, i), fetcher.mem.Slot(0, i)) {
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
