package memdrv_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// settle runs one driver call and waits, through its callback, until its
// access leaves Open.
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
	for {
		if st := op.Poll(); st.Access != contract.Open {
			return st, nil
		}
		<-changed
	}
}

// Two endpoints in one process share a store: a block put from one
// lender's slot is fetched into another lender's slot.
func Example() {
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
		row := contract.Row{Key: "block-7", Spans: []contract.Span{src.Region.Slot(2)}}
		return publisher.Put(contract.RowBatch{Rows: []contract.Row{row}}, onChange)
	})
	if err != nil {
		panic(err)
	}
	get, err := settle(func(onChange func()) (contract.Operation, error) {
		row := contract.Row{Key: "block-7", Spans: []contract.Span{dst.Region.Slot(0)}}
		return fetcher.Get(contract.RowBatch{Rows: []contract.Row{row}}, nil, onChange)
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("put:", put.Rows[0], put.Access)
	fmt.Println("get:", get.Rows[0], get.Access)
	fmt.Println("bytes equal:", bytes.Equal(src.Slot(2), dst.Slot(0)))

	// The owner's cleanup order: drain, revoke, close; then free.
	ctx := context.Background()
	fmt.Println("drained:", publisher.Drain(ctx), fetcher.Drain(ctx))
	fmt.Println("closed:", publisher.Unregister(srcReg), fetcher.Unregister(dstReg), publisher.Close(), fetcher.Close())
	// Output:
	// put: ready ended
	// get: ready ended
	// bytes equal: true
	// drained: true true
	// closed: <nil> <nil> <nil> <nil>
}
