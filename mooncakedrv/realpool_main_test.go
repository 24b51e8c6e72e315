package mooncakedrv

import (
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/kvshare/kvshare/mooncakedrv/pool"
)

// realStatusTimeout is MC_TCP_STATUS_TIMEOUT_SEC for every client of the
// real-pool tests: a transfer to a provider that stopped answering ends
// -800 after this many seconds instead of Mooncake's 30.
const realStatusTimeout = "3"

// TestMain sets, for the whole process and before any client exists, the
// environment the real-pool tests' Mooncake clients need: the transfer
// engine bound to loopback, or to a client node's own address
// (MC_TCP_BIND_ADDRESS), and a short TCP status-frame timeout
// (realStatusTimeout). The library reads both with
// getenv; setting them here, once, means no test changes the environment
// while a library thread may read it (and t.Setenv, which forbids
// t.Parallel, is not needed). The tests over the fake never read them.
//
// Run with writerEnv set, the binary is the other writer of the
// overtaken-put test instead (see runWriter).
//
// When a test kept a Mooncake client alive (its driver could not prove
// an access ended, so it may never be destroyed), the binary ends with
// syscall.Exit: under -race, os.Exit runs the race runtime's finaliser,
// whose C exit() runs the library's static destructors and atexit
// handlers over the live client, which can crash the process after every
// test passed.
func TestMain(m *testing.M) {
	bind := "127.0.0.1"
	if host := os.Getenv(pool.EnvNodeHost); host != "" {
		bind = host // a client node's own address (realpool_fault_node_test.go)
	}
	for name, value := range map[string]string{
		"MC_TCP_BIND_ADDRESS":       bind,
		"MC_TCP_STATUS_TIMEOUT_SEC": realStatusTimeout,
	} {
		if err := os.Setenv(name, value); err != nil {
			fmt.Fprintf(os.Stderr, "setting %s: %v\n", name, err)
			os.Exit(1)
		}
	}
	if os.Getenv(writerEnv) != "" {
		os.Exit(runWriter())
	}
	code := m.Run()
	if n := clientsKept.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "mooncakedrv tests: %d Mooncake clients were kept alive; exiting without the C exit handlers\n", n)
		syscall.Exit(code)
	}
	os.Exit(code)
}

// clientsKept counts the Mooncake clients a test kept alive for the life
// of the process (see TestMain).
var clientsKept atomic.Int32
