package fakesdk_test

import (
	"fmt"
	"syscall"
	"unsafe"

	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

func Example() {
	// Memory lent to a store lives outside the Go heap.
	mem, err := syscall.Mmap(-1, 0, 3*8, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		panic(err)
	}
	defer syscall.Munmap(mem)
	base := uintptr(unsafe.Pointer(&mem[0]))
	copy(mem, "rowbytes")

	store := fakesdk.New(fakesdk.Options{})
	// A get of "k2" answers LEASE_EXPIRED after its buffer was written.
	if err := store.Script(fakesdk.Fault{Op: fakesdk.Get, Key: "k2", Code: mooncakesdk.LeaseExpired, Phase: fakesdk.AfterLanding}); err != nil {
		panic(err)
	}
	var c mooncakesdk.Client = store.Client()

	res := make([]int64, 2)
	_ = c.BatchPutFrom([]string{"k", "k2"}, []uintptr{base, base}, []uint64{8, 8}, res)
	fmt.Println("put:", res)
	_ = c.BatchPutFrom([]string{"k"}, []uintptr{base + 8}, []uint64{8}, res[:1])
	fmt.Println("put again:", res[:1], "(never overwrites)")

	res = make([]int64, 3)
	_ = c.BatchGetInto([]string{"k", "missing", "k2"}, []uintptr{base + 8, base + 8, base + 16}, []uint64{8, 8, 8}, res)
	fmt.Println("get:", mooncakesdk.Code(res[0]), mooncakesdk.Code(res[1]), mooncakesdk.Code(res[2]))
	fmt.Printf("buffers: %q %q\n", mem[8:16], mem[16:24])

	exist := make([]int32, 2)
	_ = c.BatchIsExist([]string{"k", "missing"}, exist)
	fmt.Println("exist:", exist)
	_ = c.Destroy()
	// Output:
	// put: [0 0]
	// put again: [0] (never overwrites)
	// get: Code(8) OBJECT_NOT_FOUND(-704) LEASE_EXPIRED(-707)
	// buffers: "rowbytes" "rowbytes"
	// exist: [1 0]
}
