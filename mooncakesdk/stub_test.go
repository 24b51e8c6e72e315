package mooncakesdk

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"
)

// stubLib is the test's handle on a stub library built from
// testdata/stub/stub.c: the stub_* functions that script its answers and
// read back what it received, loaded with purego like the store's own.
type stubLib struct {
	path string

	scriptCreateNull func(on int32)
	scriptSetup      func(rc int32, hold int32)
	releaseSetup     func()
	waitSetupEntered func(timeoutMS int32) int32
	waitDestroyed    func(n, timeoutMS int32) int32
	scriptBatch      func(rc int32)
	scriptCodes      func(codes []int64, n uint64)
	scriptHealth     func(rc int32)
	scriptRegister   func(reg, unreg int32)
	callLogInto      func(out []byte, n uint64)
	countSeen        func() uint64
	keySeenInto      func(i uint64, out []byte, n uint64)
	keyAddr          func(i uint64) uint64
	seen             func(which int32, i uint64) uint64
	setupStringInto  func(which int32, out []byte, n uint64)
	setupSize        func(which int32) uint64
	tid              func(which int32) int64
	waitThreadExited func(timeoutMS int32) int32
	registration     func(which int32) uint64
	scriptRemove     func(rc int32)
	removeForce      func() int32
	replicate        func(which int32) int64
	preferredInto    func(i uint64, out []byte, n uint64)
}

// The test binary's main goroutine keeps the process's main thread for
// itself, so no other goroutine runs there. Go never ends the main
// thread: a goroutine that exits locked to it parks that thread for good
// instead. That still keeps Open's promise (no Go code runs on the
// thread again), but leaves no thread exit for
// TestCreateThreadIsThrownAway to see.
func init() { runtime.LockOSThread() }

// requireGCC skips the test when gcc is missing, unless the run must
// build the stub (CI=true or KVSHARE_REQUIRE_GCC set): then it fails.
func requireGCC(t *testing.T) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err == nil {
		return gcc
	}
	if os.Getenv("CI") == "true" || os.Getenv("KVSHARE_REQUIRE_GCC") != "" {
		t.Fatalf("gcc is required to build the stub store library (CI=true or KVSHARE_REQUIRE_GCC set): %v", err)
	}
	t.Skip("gcc not found: skipping the tests that build the stub store library")
	return ""
}

// buildStub compiles the stub into a fresh directory and returns the
// library's path. Each build is its own file, so each test loads its own
// copy with its own state.
func buildStub(t *testing.T, name string, extra ...string) string {
	t.Helper()
	gcc := requireGCC(t)
	out := filepath.Join(t.TempDir(), name)
	args := append([]string{"-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror", "-o", out}, extra...)
	args = append(args, filepath.Join("testdata", "stub", "stub.c"), "-lpthread")
	cmd := exec.Command(gcc, args...)
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "gcc %v:\n%s", args, msg)
	return out
}

// loadStub opens a built stub's test functions.
func loadStub(t *testing.T, path string) *stubLib {
	t.Helper()
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	require.NoError(t, err)
	s := &stubLib{path: path}
	for name, fptr := range map[string]any{
		"stub_script_create_null":        &s.scriptCreateNull,
		"stub_script_setup":              &s.scriptSetup,
		"stub_release_setup":             &s.releaseSetup,
		"stub_wait_setup_entered":        &s.waitSetupEntered,
		"stub_wait_destroyed":            &s.waitDestroyed,
		"stub_script_batch":              &s.scriptBatch,
		"stub_script_codes":              &s.scriptCodes,
		"stub_script_health":             &s.scriptHealth,
		"stub_script_register":           &s.scriptRegister,
		"stub_call_log":                  &s.callLogInto,
		"stub_count_seen":                &s.countSeen,
		"stub_key_seen":                  &s.keySeenInto,
		"stub_key_addr":                  &s.keyAddr,
		"stub_seen":                      &s.seen,
		"stub_setup_string":              &s.setupStringInto,
		"stub_setup_size":                &s.setupSize,
		"stub_tid":                       &s.tid,
		"stub_wait_create_thread_exited": &s.waitThreadExited,
		"stub_registration":              &s.registration,
		"stub_script_remove":             &s.scriptRemove,
		"stub_remove_force":              &s.removeForce,
		"stub_replicate":                 &s.replicate,
		"stub_preferred":                 &s.preferredInto,
	} {
		addr, err := purego.Dlsym(h, name)
		require.NoError(t, err, "stub lacks %s", name)
		purego.RegisterFunc(fptr, addr)
	}
	return s
}

// eventWaitMS bounds the stub's waits for an event (setup entered, a
// destroy, the create thread's exit). Each comes at once when the binding
// works; the bound only keeps a broken binding from hanging the run.
const eventWaitMS = 30_000

func cString(fill func(out []byte, n uint64)) string {
	buf := make([]byte, 1<<16)
	fill(buf, uint64(len(buf)))
	if i := bytes.IndexByte(buf, 0); i >= 0 {
		buf = buf[:i]
	}
	return string(buf)
}

// callLog is every store function the stub saw, in order; a name with a
// leading "!" was called with a handle that was not live (or, for a data
// call, not set up).
func (s *stubLib) callLog() string { return cString(s.callLogInto) }

func (s *stubLib) keySeen(i int) string {
	return cString(func(out []byte, n uint64) { s.keySeenInto(uint64(i), out, n) })
}

func (s *stubLib) setupString(which int32) string {
	return cString(func(out []byte, n uint64) { s.setupStringInto(which, out, n) })
}

// fnv1a is the stub's sum of the bytes it read.
func fnv1a(p []byte) uint64 {
	h := uint64(1469598103934665603)
	for _, b := range p {
		h ^= uint64(b)
		h *= 1099511628211
	}
	return h
}

// offHeap maps n bytes outside the Go heap, as a lender's staging memory
// is, and unmaps them when the test ends.
func offHeap(t *testing.T, n int) ([]byte, uintptr) {
	t.Helper()
	mem, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	return mem, uintptr(unsafe.Pointer(&mem[0]))
}

// fakeMaster listens where a master would; the kernel completes the
// connection Open dials without an Accept.
func fakeMaster(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	return ln.Addr().String()
}

// stubConfig is a valid config pointing at the stub and a fake master.
func stubConfig(t *testing.T, lib string) StoreConfig {
	t.Helper()
	data := []byte(`
[blob]
key_prefix = "t"
[mooncake]
master = "` + fakeMaster(t) + `"
metadata_server = "P2PHANDSHAKE"
protocol = "rdma"
devices = ["mlx5_0", "mlx5_1"]
local_hostname = "10.0.0.7"
global_segment_size = 1073741824
local_buffer_size = 16777216
`)
	cfg, err := ParseStoreConfig("stub.toml", data)
	require.NoError(t, err)
	cfg.Mooncake.Library = lib
	return cfg
}
