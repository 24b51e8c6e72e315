package cudart

import (
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"
)

// fakeLib is the test's handle on a fake libcudart.so built from
// testdata/fakecudart/fakecudart.c: the fake_* functions that script its
// answers and read back what it saw, loaded with purego like the
// runtime's own functions (dlopen of the same path gives the same copy).
type fakeLib struct {
	path string

	setDevices    func(n, err int32)
	fail          func(name string, code int32)
	callLogInto   func(out []byte, n uint64)
	tidsInto      func(out []int64, n uint64) uint64
	live          func(kind int32) int32
	isAlloc       func(p, n uint64, kind int32) int32
	currentDevice func() int32
	hostFlags     func() uint32
	copied        func(kind int32) uint64
}

// Allocation kinds of fake_live and fake_is_alloc.
const (
	fakeDevice = 0
	fakeHost   = 1
)

// requireGCC skips the test when gcc is missing, unless the run must
// build the fake (CI=true or KVSHARE_REQUIRE_GCC set): then it fails.
func requireGCC(t *testing.T) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err == nil {
		return gcc
	}
	if os.Getenv("CI") == "true" || os.Getenv("KVSHARE_REQUIRE_GCC") != "" {
		t.Fatalf("gcc is required to build the fake CUDA runtime (CI=true or KVSHARE_REQUIRE_GCC set): %v", err)
	}
	t.Skip("gcc not found: skipping the tests that build the fake CUDA runtime")
	return ""
}

// buildFake compiles the fake into a fresh folder as libcudart.so and
// returns its path. Each build is its own file, so each test loads its
// own copy with its own state. extra passes -D flags.
func buildFake(t *testing.T, extra ...string) string {
	t.Helper()
	gcc := requireGCC(t)
	out := filepath.Join(t.TempDir(), "libcudart.so")
	args := append([]string{"-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror", "-o", out}, extra...)
	args = append(args, filepath.Join("testdata", "fakecudart", "fakecudart.c"), "-lpthread")
	msg, err := exec.Command(gcc, args...).CombinedOutput()
	require.NoError(t, err, "gcc %v:\n%s", args, msg)
	return out
}

// loadFake opens a built fake's test functions.
func loadFake(t *testing.T, path string) *fakeLib {
	t.Helper()
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	require.NoError(t, err)
	f := &fakeLib{path: path}
	for sym, fptr := range map[string]any{
		"fake_set_devices":    &f.setDevices,
		"fake_fail":           &f.fail,
		"fake_call_log":       &f.callLogInto,
		"fake_tids":           &f.tidsInto,
		"fake_live":           &f.live,
		"fake_is_alloc":       &f.isAlloc,
		"fake_current_device": &f.currentDevice,
		"fake_host_flags":     &f.hostFlags,
		"fake_copied":         &f.copied,
	} {
		addr, err := purego.Dlsym(h, sym)
		require.NoError(t, err, "fake lacks %s", sym)
		purego.RegisterFunc(fptr, addr)
	}
	return f
}

// newFake builds a fake and opens its test functions.
func newFake(t *testing.T, extra ...string) *fakeLib {
	t.Helper()
	return loadFake(t, buildFake(t, extra...))
}

// open opens a Runtime over the fake on device, closed when the test ends.
func (f *fakeLib) open(t *testing.T, device int) *Runtime {
	t.Helper()
	r, err := Open(Options{Library: f.path, Device: device, Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// quiet drops the runtime's log record at open.
var quiet = slog.New(slog.DiscardHandler)

// callLog is the names of every CUDA call the fake saw, in order.
func (f *fakeLib) callLog() string {
	buf := make([]byte, 1<<16)
	f.callLogInto(buf, uint64(len(buf)))
	if i := bytes.IndexByte(buf, 0); i >= 0 {
		buf = buf[:i]
	}
	return string(buf)
}

// tids is the OS thread of every CUDA call the fake saw, in order.
func (f *fakeLib) tids() []int64 {
	out := make([]int64, 4096)
	return out[:f.tidsInto(out, uint64(len(out)))]
}
