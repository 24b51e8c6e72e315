package fakesdk

import (
	"bytes"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// slab is test memory outside the Go heap, as a lender's staging memory
// is: n slots of size bytes each.
type slab struct {
	mem  []byte
	base uintptr
	size int
}

func newSlab(t testing.TB, slots, size int) *slab {
	t.Helper()
	mem, err := syscall.Mmap(-1, 0, slots*size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	return &slab{mem: mem, base: uintptr(unsafe.Pointer(&mem[0])), size: size}
}

func (s *slab) addr(slot int) uintptr { return s.base + uintptr(slot*s.size) }

func (s *slab) slot(i int) []byte { return s.mem[i*s.size : (i+1)*s.size] }

// fill writes b into every byte of slot i.
func (s *slab) fill(i int, b byte) { copy(s.slot(i), bytes.Repeat([]byte{b}, s.size)) }

func (s *slab) sizes(n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(s.size)
	}
	return out
}

func (s *slab) addrs(slots ...int) []uintptr {
	out := make([]uintptr, len(slots))
	for i, slot := range slots {
		out[i] = s.addr(slot)
	}
	return out
}

// put stores keys from slots; it fails the test on a call error.
func put(t testing.TB, c *Client, s *slab, keys []string, slots ...int) []int64 {
	t.Helper()
	res := make([]int64, len(keys))
	require.NoError(t, c.BatchPutFrom(keys, s.addrs(slots...), s.sizes(len(keys)), res))
	return res
}

func get(t testing.TB, c *Client, s *slab, keys []string, slots ...int) []int64 {
	t.Helper()
	res := make([]int64, len(keys))
	require.NoError(t, c.BatchGetInto(keys, s.addrs(slots...), s.sizes(len(keys)), res))
	return res
}

func exist(t testing.TB, c *Client, keys ...string) []int32 {
	t.Helper()
	res := make([]int32, len(keys))
	require.NoError(t, c.BatchIsExist(keys, res))
	return res
}

// faultWorld is the starting point of the fault tests: a store holding
// "old" (every byte 0x0D) and a slab of n slots, slot 0 holding 0xA1
// (what a put sends) and the others 0xEE (get buffers not yet written).
func faultWorld(t *testing.T, opts Options, n int) (*Store, *slab) {
	t.Helper()
	st := New(opts)
	_, err := st.Seed("old", bytes.Repeat([]byte{0x0D}, slot))
	require.NoError(t, err)
	s := newSlab(t, n, slot)
	s.fill(0, 0xA1)
	for i := 1; i < n; i++ {
		s.fill(i, 0xEE)
	}
	return st, s
}
