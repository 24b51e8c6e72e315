package broken_test

import (
	"context"
	"fmt"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/broken"
)

// A driver that breaks one rule answers a get of an absent key Ready,
// where memdrv's driver answers Miss; a suite that checks the rule must
// catch it.
func ExampleNew() {
	stem, err := keys.NewStem("demo")
	if err != nil {
		panic(err)
	}
	store := memdrv.NewStore()
	honest := memdrv.New(store, memdrv.Options{})
	liar, err := broken.New(broken.ReadyForAbsent, store, memdrv.Options{})
	if err != nil {
		panic(err)
	}
	mem, err := memdrv.Alloc(4096, 2, contract.Host)
	if err != nil {
		panic(err)
	}
	for _, d := range []contract.Driver{honest, liar} {
		reg, err := d.Register(mem.Region)
		if err != nil {
			panic(err)
		}
		changed := make(chan struct{}, 1)
		row := contract.Row{Name: []byte("absent"), Spans: []contract.Span{mem.Region.Slot(0)}}
		op, err := d.Get(contract.RowBatch{Keys: stem, Rows: []contract.Row{row}}, nil, func() {
			select {
			case changed <- struct{}{}:
			default:
			}
		})
		if err != nil {
			panic(err)
		}
		st := op.Poll(nil)
		for st.Access == contract.Open {
			<-changed
			st = op.Poll(st.Rows)
		}
		fmt.Printf("%T: %v\n", d, st.Rows[0])
		if !d.Drain(context.Background()) {
			panic("drain")
		}
		if err := d.Unregister(reg); err != nil {
			panic(err)
		}
	}
	fmt.Println("freed:", mem.Free())
	// Output:
	// *memdrv.Driver: miss
	// *broken.Driver: ready
	// freed: <nil>
}
