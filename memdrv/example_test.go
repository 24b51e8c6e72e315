package memdrv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
)

// settle runs one driver call and waits, through its callback, until its
// access leaves Open. It polls into one buffer of its own, which Poll
// fills anew each time (the statuses are the caller's; the driver never
// keeps them).
func settle(start func(onChange func()) (contract.Operation, error)) (contract.OpState, error) {
	changed := make(chan struct{}, 1)
	op, err := start(func() {
		select {
		case changed <- struct{}{}:
		default: // a signal is already pending; the poll after it sees this change too
		}
	})
	if err != nil {
		return contract.OpState{}, err
	}
	var rows []contract.RowStatus
	for {
		st := op.Poll(rows)
		if st.Access != contract.Open {
			return st, nil
		}
		rows = st.Rows
		<-changed
	}
}

// Two endpoints in one process share a store: a block put from one
// lender's slot is fetched into another lender's slot. Each row carries
// a name; the driver stores it under the key the batch's key maker (a
// keys.Stem here, as the binding passes) builds from that name.
func Example() {
	stem, err := keys.NewStem("demo")
	if err != nil {
		panic(err)
	}
	store := memdrv.NewStore()
	publisher := memdrv.New(store, memdrv.Options{})
	fetcher := memdrv.New(store, memdrv.Options{})

	src, err := memdrv.Alloc(4096, 4, contract.Host)
	if err != nil {
		panic(err)
	}
	defer src.Free()
	dst, err := memdrv.Alloc(4096, 4, contract.Host)
	if err != nil {
		panic(err)
	}
	defer dst.Free()
	srcReg, err := publisher.Register(src.Region)
	if err != nil {
		panic(err)
	}
	dstReg, err := fetcher.Register(dst.Region)
	if err != nil {
		panic(err)
	}

	copy(src.Slot(2), "the KV block of layer 0, page 7")
	put, err := settle(func(onChange func()) (contract.Operation, error) {
		row := contract.Row{Name: []byte("block-7"), Spans: []contract.Span{src.Region.Slot(2)}}
		return publisher.Put(contract.RowBatch{Keys: stem, Rows: []contract.Row{row}}, onChange)
	})
	if err != nil {
		panic(err)
	}
	get, err := settle(func(onChange func()) (contract.Operation, error) {
		row := contract.Row{Name: []byte("block-7"), Spans: []contract.Span{dst.Region.Slot(0)}}
		return fetcher.Get(contract.RowBatch{Keys: stem, Rows: []contract.Row{row}}, nil, onChange)
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("put:", put.Rows[0], put.Access)
	fmt.Println("get:", get.Rows[0], get.Access)
	fmt.Println("bytes equal:", bytes.Equal(src.Slot(2), dst.Slot(0)))
	key, err := stem.Key([]byte("block-7"))
	if err != nil {
		panic(err)
	}
	_, stored := store.Object(key)
	fmt.Printf("stored under %s: %v\n", key, stored)

	// The owner's cleanup order: drain, revoke, close; then free.
	ctx := context.Background()
	fmt.Println("drained:", publisher.Drain(ctx), fetcher.Drain(ctx))
	fmt.Println("closed:", publisher.Unregister(srcReg), fetcher.Unregister(dstReg), publisher.Close(), fetcher.Close())
	// Output:
	// put: ready ended
	// get: ready ended
	// bytes equal: true
	// stored under demo/v1/626c6f636b2d37: true
	// drained: true true
	// closed: <nil> <nil> <nil> <nil>
}

// A key another writer is still writing is NotReady both ways; once the
// writer finishes, a get is Ready and a put keeps the first object.
func ExampleStore_BeginWrite() {
	stem, err := keys.NewStem("demo")
	if err != nil {
		panic(err)
	}
	key, err := stem.Key([]byte("k"))
	if err != nil {
		panic(err)
	}
	store := memdrv.NewStore()
	d := memdrv.New(store, memdrv.Options{})
	mem, err := memdrv.Alloc(8, 2, contract.Host)
	if err != nil {
		panic(err)
	}
	reg, err := d.Register(mem.Region)
	if err != nil {
		panic(err)
	}
	row := func(slot int) contract.RowBatch {
		return contract.RowBatch{Keys: stem, Rows: []contract.Row{{Name: []byte("k"), Spans: []contract.Span{mem.Region.Slot(slot)}}}}
	}
	put := func() contract.RowStatus {
		st, err := settle(func(f func()) (contract.Operation, error) { return d.Put(row(0), f) })
		if err != nil {
			panic(err)
		}
		return st.Rows[0]
	}
	get := func() contract.RowStatus {
		st, err := settle(func(f func()) (contract.Operation, error) { return d.Get(row(1), nil, f) })
		if err != nil {
			panic(err)
		}
		return st.Rows[0]
	}

	copy(mem.Slot(0), "mine....")
	finish := store.BeginWrite(key)
	fmt.Println("while written:", put(), get())
	finish([]byte("theirs.."))
	fmt.Println("once whole:", put(), get(), string(mem.Slot(1)))

	if !d.Drain(context.Background()) {
		panic("drain")
	}
	fmt.Println(d.Unregister(reg), d.Close(), mem.Free())
	// Output:
	// while written: not-ready not-ready
	// once whole: ready ready theirs..
	// <nil> <nil> <nil>
}

// Memory lent to a memdrv driver is not freed: Free refuses it until the
// registration is revoked.
func ExampleMemory_Free() {
	d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	mem, err := memdrv.Alloc(4096, 1, contract.Host)
	if err != nil {
		panic(err)
	}
	reg, err := d.Register(mem.Region)
	if err != nil {
		panic(err)
	}
	fmt.Println("while registered:", errors.Is(mem.Free(), memdrv.ErrMemoryLent))
	if err := d.Unregister(reg); err != nil {
		panic(err)
	}
	fmt.Println("once revoked:", mem.Free())
	fmt.Println("again:", mem.Free())
	// Output:
	// while registered: true
	// once revoked: <nil>
	// again: <nil>
}
