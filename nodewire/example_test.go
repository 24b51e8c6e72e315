package nodewire_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"

	"github.com/kvshare/kvshare/nodewire"
)

// unixPair returns two connected ends of a Unix stream socket.
func unixPair() (*net.UnixConn, *net.UnixConn) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		panic(err)
	}
	conn := func(fd int) *net.UnixConn {
		f := os.NewFile(uintptr(fd), "socket")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			panic(err)
		}
		return c.(*net.UnixConn)
	}
	return conn(fds[0]), conn(fds[1])
}

// An engine says hello and the node welcomes it, over a Unix stream
// socket.
func ExampleConn() {
	a, b := unixPair()
	engine, node := nodewire.NewConn(a), nodewire.NewConn(b)
	defer engine.Close()
	defer node.Close()

	if err := engine.WriteFrame(1, &nodewire.Hello{Version: nodewire.Version, Engine: "vllm-0"}, -1); err != nil {
		panic(err)
	}
	h, m, _, err := node.ReadFrame(1 << 20)
	if err != nil {
		panic(err)
	}
	hello := m.(*nodewire.Hello)
	fmt.Printf("node read %v %d from %q\n", h.Type, h.Request, hello.Engine)

	welcome := &nodewire.Welcome{Version: nodewire.Version, NodePID: 1, MaxFrame: 1 << 20, MaxAttempts: 64, MaxRows: 4096, MaxLendBytes: 1 << 30}
	if err := node.WriteFrame(h.Request, welcome, -1); err != nil {
		panic(err)
	}
	h, m, _, err = engine.ReadFrame(1 << 20)
	if err != nil {
		panic(err)
	}
	fmt.Printf("engine read %v %d: at most %d rows\n", h.Type, h.Request, m.(*nodewire.Welcome).MaxRows)
	// Output:
	// node read hello 1 from "vllm-0"
	// engine read welcome 1: at most 4096 rows
}

// A malformed frame is refused naming the field that was wrong; the code
// says what to tell the peer.
func ExampleDecodeFrame() {
	frame, _ := nodewire.AppendFrame(nil, 7, &nodewire.Lookup{Groups: [][][]byte{{[]byte("blk-a")}}})
	frame[len(frame)-9] = 0 // the first name's end offset: 5 becomes 0, an empty name

	_, _, err := nodewire.DecodeFrame(frame, 1<<20)
	fmt.Println(err)
	fmt.Println(errors.Is(err, nodewire.ErrBadNames), nodewire.CodeOf(err))
	// Output:
	// nodewire: lookup: group 0: names: name 0 empty (end 0)
	// true bad-names
}

// The layout of a lend: regions of whole pages.
func ExampleStride() {
	stride, _ := nodewire.Stride(100, 41) // 4,100 bytes of slots
	size, _ := nodewire.LendSize(100, 41, 3)
	fmt.Println(stride, size)
	// Output: 8192 24576
}
