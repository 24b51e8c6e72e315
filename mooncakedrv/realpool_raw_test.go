package mooncakedrv

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// rawClient is a second client of a real pool, outside every driver: it
// stores and reads objects as another writer and reader would, one at a
// time, through a buffer of its own (mapped outside the Go heap and
// registered). The conformance hooks Seed, Object and Full use it, and
// the cases stage objects with it. At the end of the test it unregisters
// its buffer, destroys the client and unmaps the buffer, unless a call
// answered -800 (the transfer may still touch the buffer: both are then
// kept for the life of the process).
type rawClient struct {
	t  testing.TB
	c  mooncakesdk.Client
	mu sync.Mutex
	// buf is the client's registered buffer; held says a -800 was seen.
	buf  []byte
	held bool
	// filled counts the objects fill stored, which number its keys.
	filled int
}

// rawBufferBytes is the size of a raw client's buffer: the largest object
// it stores or reads.
const rawBufferBytes = 1 << 20

// openRawClient opens a client of s with the same store config as its
// drivers (mooncakesdk.Open).
func openRawClient(t testing.TB, s *realStore) *rawClient {
	t.Helper()
	cfg, err := mooncakesdk.LoadStoreConfig(s.config)
	require.NoError(t, err)
	ctx, cancel := bound(t, realWait, "opening a client").Context(context.Background())
	defer cancel()
	c, err := mooncakesdk.Open(ctx, cfg, nil)
	require.NoError(t, err)
	buf, err := syscall.Mmap(-1, 0, rawBufferBytes, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	r := &rawClient{t: t, c: c, buf: buf}
	require.NoError(t, c.RegisterBuffer(r.addr(), rawBufferBytes))
	t.Cleanup(r.close)
	return r
}

func (r *rawClient) addr() uintptr { return uintptr(unsafe.Pointer(&r.buf[0])) }

func (r *rawClient) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held {
		r.t.Logf("raw client: a transfer answered -800; its buffer and handle are kept")
		clientsKept.Add(1)
		return
	}
	if err := r.c.UnregisterBuffer(r.addr()); err != nil {
		r.t.Errorf("raw client: unregister: %v", err)
		return
	}
	if err := r.c.Destroy(); err != nil {
		r.t.Errorf("raw client: destroy: %v", err)
	}
	_ = syscall.Munmap(r.buf)
}

// put stores data under key and returns the store's answer (0 proves
// nothing: see exists).
func (r *rawClient) put(key string, data []byte) (mooncakesdk.Code, error) {
	if len(data) == 0 || len(data) > rawBufferBytes {
		return 0, fmt.Errorf("raw client: an object of %d bytes (1 to %d)", len(data), rawBufferBytes)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	copy(r.buf, data)
	res := make([]int64, 1)
	if err := r.c.BatchPutFrom([]string{key}, []uintptr{r.addr()}, []uint64{uint64(len(data))}, res); err != nil {
		return 0, err
	}
	r.note(res[0])
	return mooncakesdk.Code(res[0]), nil
}

// get reads the object under key into a buffer of room bytes (zeroed
// first) and returns the store's answer and the buffer.
func (r *rawClient) get(key string, room int) ([]byte, mooncakesdk.Code, error) {
	if room <= 0 || room > rawBufferBytes {
		return nil, 0, fmt.Errorf("raw client: a read of %d bytes (1 to %d)", room, rawBufferBytes)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.buf[:room])
	res := make([]int64, 1)
	if err := r.c.BatchGetInto([]string{key}, []uintptr{r.addr()}, []uint64{uint64(room)}, res); err != nil {
		return nil, 0, err
	}
	r.note(res[0])
	return append([]byte(nil), r.buf[:room]...), mooncakesdk.Code(res[0]), nil
}

// exists asks batch_is_exist about key: 1 a complete object, 0 none.
func (r *rawClient) exists(key string) (int32, error) {
	res := make([]int32, 1)
	err := r.c.BatchIsExist([]string{key}, res)
	return res[0], err
}

func (r *rawClient) note(code int64) {
	if mooncakesdk.Code(code) == mooncakesdk.TransferFail {
		r.held = true
	}
}

// seed stores data under key and requires the store to hold a complete
// object there afterwards.
func (r *rawClient) seed(key string, data []byte) error {
	code, err := r.put(key, data)
	if err != nil || code != mooncakesdk.OK {
		return fmt.Errorf("raw client: seeding %q (%d bytes): answer %v, err %v", key, len(data), code, err)
	}
	if e, err := r.exists(key); err != nil || e != 1 {
		return fmt.Errorf("raw client: seeded %q, yet batch_is_exist answers %d (err %v)", key, e, err)
	}
	return nil
}

// object returns the complete object under key (at most room bytes), and
// whether there is one: a byte count is one, -704 and -703 (another put
// in flight) none; any other answer is an error.
func (r *rawClient) object(key string, room int) ([]byte, bool, error) {
	buf, code, err := r.get(key, room)
	switch {
	case err != nil:
		return nil, false, err
	case code > 0:
		return buf[:code], true, nil
	case code == mooncakesdk.ObjectNotFound, code == mooncakesdk.ReplicaIsNotReady:
		return nil, false, nil
	}
	return nil, false, fmt.Errorf("raw client: reading %q into %d bytes: answer %v", key, room, code)
}

// fill stores objects under fresh keys prefix+"/<n>", of 1 MiB, then
// 64 KiB, then 4 KiB, each size until the store answers -200 (pool full,
// eviction off), so that afterwards no object of 4 KiB fits. It returns
// how many it stored; any answer other than 0 and -200 is an error.
func (r *rawClient) fill(prefix string) (int, error) {
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i)
	}
	n := 0
	for _, size := range []int{1 << 20, 64 << 10, 4 << 10} {
		for {
			r.filled++
			code, err := r.put(fmt.Sprintf("%s/%d", prefix, r.filled), data[:size])
			if err != nil {
				return n, err
			}
			if code == mooncakesdk.NoAvailableHandle {
				break
			}
			if code != mooncakesdk.OK {
				return n, fmt.Errorf("raw client: filling the pool, a put of %d bytes answered %v", size, code)
			}
			n++
			if n > 1<<16 {
				return n, fmt.Errorf("raw client: %d objects stored and the pool is still not full", n)
			}
		}
	}
	return n, nil
}
