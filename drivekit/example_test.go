//go:build unix

package drivekit_test

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"unsafe"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
)

// toyStore is a whole store for the kit: objects in a map, one row per
// call. A put never overwrites (a key that holds an object is Ready);
// a get of an object of the row's size is Ready, of another size Fault,
// of an absent key Miss. Every copy is done before Transfer returns, so
// that return proves access ended: no End is ever Unprovable, and there
// is no client to tear down.
type toyStore struct {
	mu      sync.Mutex
	objects map[string][]byte
}

func (s *toyStore) Transfer(c *drivekit.Call) {
	for i, key := range c.Keys {
		c.Ends[i].Status = s.row(c.Dir, key, c.Rows[i], c.OwnWrite[i])
	}
}

func (s *toyStore) row(dir contract.Direction, key string, row contract.Row, ownWrite bool) contract.RowStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.objects[key]
	switch {
	case dir == contract.PutDir && ownWrite:
		return contract.NotReady // another put of this driver writes it
	case dir == contract.PutDir && ok:
		return contract.Ready // the first object stays
	case dir == contract.PutDir:
		s.objects[key] = gather(row.Spans)
		return contract.Ready
	case !ok:
		return contract.Miss
	case int64(len(obj)) != row.Bytes():
		return contract.Fault
	}
	scatter(row.Spans, obj)
	return contract.Ready
}

// Look answers from the map: the kit adds InFlight for its own puts.
func (s *toyStore) Look(_ context.Context, keys [][]byte, dst []contract.Presence) []contract.Presence {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if _, ok := s.objects[string(k)]; ok {
			dst = append(dst, contract.Present)
		} else {
			dst = append(dst, contract.Absent)
		}
	}
	return dst
}

// LookBlocks is false: the map answers at once.
func (s *toyStore) LookBlocks() bool { return false }

// at views n bytes of lent memory at addr (memory outside the Go heap).
func at(addr uintptr, n int64) []byte {
	return unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&addr))), n)
}

func gather(spans []contract.Span) []byte {
	var obj []byte
	for _, sp := range spans {
		obj = append(obj, at(sp.Addr, sp.Len)...)
	}
	return obj
}

func scatter(spans []contract.Span, obj []byte) {
	for _, sp := range spans {
		obj = obj[copy(at(sp.Addr, sp.Len), obj):]
	}
}

// names makes a name its own key.
type names struct{}

func (names) AppendKey(dst, name []byte) []byte { return append(dst, name...) }
func (names) KeyLen(n int) int                  { return n }

// A store's author writes toyStore; the kit makes it a driver that
// keeps every rule of the contract.
func Example() {
	mem, _ := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	defer syscall.Munmap(mem)
	region := contract.SlotRegion{Base: uintptr(unsafe.Pointer(&mem[0])), Len: 4096, SlotBytes: 1024, SlotCount: 4, Kind: contract.Host}

	d := drivekit.New(&toyStore{objects: map[string][]byte{}}, drivekit.Options{
		Name: "toy",
		Caps: contract.Capabilities{Put: true, Get: true, Cancel: true, AbsentIsMiss: true, LookupInFlight: true},
	})
	reg, _ := d.Register(region)
	copy(mem, "hello")
	row := func(slot int, name string) contract.RowBatch {
		return contract.RowBatch{Keys: names{}, Rows: []contract.Row{{Name: []byte(name), Spans: []contract.Span{region.Slot(slot)}}}}
	}
	changed := make(chan struct{}, 1)
	onChange := func() { // on a kit goroutine, outside its lock
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	wait := func(op contract.Operation) contract.OpState {
		for {
			if st := op.Poll(nil); st.Access != contract.Open {
				return st
			}
			<-changed
		}
	}

	put, _ := d.Put(row(0, "greeting"), onChange)
	fmt.Println("put:", wait(put).Rows)
	get, _ := d.Get(row(1, "greeting"), nil, onChange)
	fmt.Println("get:", wait(get).Rows, string(mem[1024:1029]))
	miss, _ := d.Get(row(2, "nothing"), nil, onChange)
	fmt.Println("get of an absent key:", wait(miss).Rows)
	got, _ := d.Lookup(context.Background(), contract.LookupBatch{Keys: names{}, Names: [][]byte{[]byte("greeting"), []byte("nothing")}}, nil)
	fmt.Println("lookup:", got)

	fmt.Println("drained:", d.Drain(context.Background()))
	fmt.Println("unregister:", d.Unregister(reg), "close:", d.Close())
	// Output:
	// put: [ready]
	// get: [ready] hello
	// get of an absent key: [miss]
	// lookup: [present absent]
	// drained: true
	// unregister: <nil> close: <nil>
}
