package memdrv_test

import (
	"fmt"

	"github.com/kvshare/kvshare/memdrv"
)

// A bounded store of two chunks: an object of two chunks evicts the two
// least recently used objects of one chunk each, whatever their size.
func ExampleNewBoundedStore() {
	store, err := memdrv.NewBoundedStore(memdrv.StoreOptions{Capacity: 2 << 10, ChunkBytes: 1 << 10})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	store.Set("a", make([]byte, 1<<10))
	store.Set("b", make([]byte, 1000)) // a part of its chunk
	store.Set("c", make([]byte, 2<<10))
	st := store.Stats()
	fmt.Printf("%d object, %d bytes in use of %d, %d evicted\n", st.Objects, st.InUse, st.Capacity, st.Evictions)
	_, ok := store.Object("a")
	fmt.Println("a still there:", ok)
	// Output:
	// 1 object, 2048 bytes in use of 2048, 2 evicted
	// a still there: false
}
