package mooncakedrv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// destroyRows and destroyRowBytes shape the objects of the destroy
// finding: enough bytes that a transfer is still streaming when the
// provider stops.
const (
	destroyRows     = 8
	destroyRowBytes = 1 << 20
)

// sdkBuffer is one client's registered buffer, mapped outside the Go
// heap and never unmapped (the finding is whether anything writes it).
type sdkBuffer struct {
	c   mooncakesdk.Client
	buf []byte
}

func openSDKBuffer(t *testing.T, s *realStore, n int) *sdkBuffer {
	t.Helper()
	cfg, err := mooncakesdk.LoadStoreConfig(s.config)
	require.NoError(t, err)
	ctx, cancel := bound(t, realWait, "opening a client").Context(context.Background())
	defer cancel()
	c, err := mooncakesdk.Open(ctx, cfg, nil)
	require.NoError(t, err)
	buf, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	b := &sdkBuffer{c: c, buf: buf}
	require.NoError(t, c.RegisterBuffer(b.addr(0), uint64(n)))
	return b
}

func (b *sdkBuffer) addr(off int) uintptr { return uintptr(unsafe.Pointer(&b.buf[off])) }

// transfer runs one get (or put) of keys, row i at offset i*rowBytes.
func (b *sdkBuffer) transfer(get bool, keys []string) ([]int64, error) {
	bufs, sizes := make([]uintptr, len(keys)), make([]uint64, len(keys))
	for i := range keys {
		bufs[i], sizes[i] = b.addr(i*destroyRowBytes), destroyRowBytes
	}
	res := make([]int64, len(keys))
	if get {
		return res, b.c.BatchGetInto(keys, bufs, sizes, res)
	}
	return res, b.c.BatchPutFrom(keys, bufs, sizes, res)
}

// fence fills the buffer with a pattern of seed and returns it.
func (b *sdkBuffer) fence(seed byte) []byte {
	for i := range b.buf {
		b.buf[i] = seed ^ byte(i>>12)
	}
	return bytes.Clone(b.buf)
}

// tasks lists this process's threads.
func tasks(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/task")
	require.NoError(t, err)
	var tids []int
	for _, e := range entries {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids
}

// stillRunning counts the threads of since that are still this
// process's.
func stillRunning(since []int) int {
	n := 0
	for _, tid := range since {
		if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); err == nil {
			n++
		}
	}
	return n
}

// comms names threads by their comm (what the kernel calls them).
func comms(tids []int) map[string]int {
	out := map[string]int{}
	for _, tid := range tids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/comm", tid))
		if err == nil {
			out[strings.TrimSpace(string(b))]++
		}
	}
	return out
}

// running keeps the threads of tids still running.
func running(tids []int) []int {
	var out []int
	for _, tid := range tids {
		if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); err == nil {
			out = append(out, tid)
		}
	}
	return out
}

// newThreads is the threads of now that were not in before.
func newThreads(before, now []int) []int {
	var out []int
	for _, tid := range now {
		if !slices.Contains(before, tid) {
			out = append(out, tid)
		}
	}
	return out
}

// idleMs makes the Go runtime start n threads now, so that later blocking
// calls into the library reuse them instead of starting threads of
// their own, which would count as the library's.
func idleMs(n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			var fds [2]int
			if syscall.Pipe(fds[:]) != nil {
				return
			}
			go func() {
				time.Sleep(50 * time.Millisecond)
				_, _ = syscall.Write(fds[1], []byte{1})
			}()
			var b [1]byte
			_, _ = syscall.Read(fds[0], b[:]) // blocks its thread
			syscall.Close(fds[0])
			syscall.Close(fds[1])
		})
	}
	wg.Wait()
}

// TestRealDestroyEndsAccess is the finding the recycling of a client
// rests on: once Destroy of a client whose transfers answered -800 has
// returned, nothing writes its buffers any more, and the client's own
// threads are gone. Two clients, each with a registered buffer, get the
// same objects while the only provider is frozen (SIGSTOP): every key
// answers -800 after the status-frame timeout. Their buffers are then
// filled with a fence; one client is destroyed (timed, its threads
// counted), the other kept as the control; the provider is resumed, and
// a few seconds later the destroyed client's buffer must be untouched.
// The control's buffer is reported (it shows whether the late transfer
// would have landed). A second round destroys a client while its call is
// still blocked inside the library on the frozen provider: Destroy waits
// for the call, and the time it takes is reported.
func TestRealDestroyEndsAccess(t *testing.T) {
	s := startRealStore(t, nil)
	keys := make([]string, destroyRows)
	seeder := openSDKBuffer(t, s, destroyRows*destroyRowBytes)
	seeder.fence(0x5a)
	for i := range keys {
		keys[i] = fmt.Sprintf("kvshare-realpool/destroy/%d", i)
	}
	res, err := seeder.transfer(false, keys)
	require.NoError(t, err)
	require.Equal(t, make([]int64, destroyRows), res, "seeding")
	defer clientsKept.Add(1) // the control, and the seeder left alive with it

	idleMs(16)
	base := tasks(t)
	destroyed := openSDKBuffer(t, s, destroyRows*destroyRowBytes)
	opened := tasks(t)
	control := openSDKBuffer(t, s, destroyRows*destroyRowBytes)
	own := newThreads(base, opened)
	t.Logf("threads: %d before the client, %d after Open (%d of its own: %v)", len(base), len(opened), len(own), comms(own))

	require.NoError(t, s.pool.Freeze())
	var wg sync.WaitGroup
	answers := make([][]int64, 2)
	start := time.Now()
	for i, b := range []*sdkBuffer{destroyed, control} {
		wg.Go(func() {
			r, err := b.transfer(true, keys)
			assert.NoError(t, err)
			answers[i] = r
		})
	}
	wg.Wait()
	t.Logf("gets on the frozen provider answered after %v: %v / %v", time.Since(start).Round(time.Millisecond), answers[0], answers[1])
	for i, r := range answers {
		assert.Contains(t, r, int64(mooncakesdk.TransferFail), "client %d: no -800, so no transfer was left unprovable", i)
	}
	atAnswer := tasks(t)
	wantD, wantC := destroyed.fence(0xd1), control.fence(0xc1)

	start = time.Now()
	require.NoError(t, destroyed.c.Destroy())
	took := time.Since(start)
	afterDestroy := tasks(t)
	grown := newThreads(opened, atAnswer)
	t.Logf("Destroy on the frozen provider took %v; threads %d at the -800, %d after Destroy; of the client's %d own threads %d still run; %d threads started during the gets, %d still run",
		took.Round(time.Millisecond), len(atAnswer), len(afterDestroy), len(own), stillRunning(own), len(grown), stillRunning(grown))
	survivors := running(own)
	cycles := []int{len(tasks(t))}
	for range 4 {
		c := openSDKBuffer(t, s, destroyRowBytes)
		require.NoError(t, c.c.Destroy())
		cycles = append(cycles, len(tasks(t)))
	}
	t.Logf("threads after each of four more clients opened and destroyed: %v; the first client's survivor still runs: %v", cycles, stillRunning(survivors) > 0)

	require.NoError(t, s.pool.Resume())
	time.Sleep(3 * statusTimeout)
	assert.Equal(t, wantD, destroyed.buf, "the destroyed client's buffer was written after Destroy returned")
	t.Logf("the control's buffer (its client alive) after the provider resumed: written: %v", !bytes.Equal(wantC, control.buf))

	// The second round: Destroy while the call is inside the library.
	blocked := openSDKBuffer(t, s, destroyRows*destroyRowBytes)
	require.NoError(t, s.pool.Freeze())
	callDone := make(chan time.Duration, 1)
	start = time.Now()
	go func() {
		_, err := blocked.transfer(true, keys)
		assert.NoError(t, err)
		callDone <- time.Since(start)
	}()
	time.Sleep(500 * time.Millisecond)
	require.NoError(t, blocked.c.Destroy())
	destroyedAt := time.Since(start)
	callAt := <-callDone
	t.Logf("Destroy called 500ms into a get on the frozen provider returned at %v; the get returned at %v", destroyedAt.Round(time.Millisecond), callAt.Round(time.Millisecond))
	assert.GreaterOrEqual(t, destroyedAt, callAt, "Destroy returned before the call inside the library")
	require.NoError(t, s.pool.Resume())
}

// streamRowBytes is the row of the streaming finding: large enough that
// a get is seen half written.
const streamRowBytes = 16 << 20

// sockets lists the socket inodes among this process's descriptors.
func sockets(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(target, "socket:") {
			out = append(out, target)
		}
	}
	return out
}

// TestRealDestroyEndsAStreamingTransfer is the finding's hard case: a
// transfer still streaming its payload when the provider stops waits
// for it (no status frame is due yet) until the store's 60 s cap, and
// then answers -800 with its session alive. Two clients get the same
// large objects; once both buffers are seen half written the provider
// is frozen. When both calls have answered, the buffers are fenced, one
// client destroyed (its sockets counted before and after), and the
// provider resumed: the control's buffer shows what the live session
// still wrote, and the destroyed client's must be untouched.
func TestRealDestroyEndsAStreamingTransfer(t *testing.T) {
	s := startRealStore(t, nil)
	const rows = 8
	keys := make([]string, rows)
	for i := range keys {
		keys[i] = fmt.Sprintf("kvshare-realpool/destroy-stream/%d", i)
	}
	seeder := openSDKBuffer(t, s, rows*streamRowBytes)
	seeder.fence(0x5a)
	put := func(b *sdkBuffer, get bool) ([]int64, error) {
		bufs, sizes := make([]uintptr, rows), make([]uint64, rows)
		for i := range rows {
			bufs[i], sizes[i] = b.addr(i*streamRowBytes), streamRowBytes
		}
		res := make([]int64, rows)
		if get {
			return res, b.c.BatchGetInto(keys, bufs, sizes, res)
		}
		return res, b.c.BatchPutFrom(keys, bufs, sizes, res)
	}
	res, err := put(seeder, false)
	require.NoError(t, err)
	require.Equal(t, make([]int64, rows), res, "seeding")
	defer clientsKept.Add(1) // the control is kept alive

	before := sockets(t)
	destroyed := openSDKBuffer(t, s, rows*streamRowBytes)
	control := openSDKBuffer(t, s, rows*streamRowBytes)
	clients := []*sdkBuffer{destroyed, control}
	answers := make([][]int64, 2)
	var wg sync.WaitGroup
	gets := func() <-chan struct{} {
		for i, b := range clients {
			wg.Go(func() {
				r, err := put(b, true)
				assert.NoError(t, err)
				answers[i] = r
			})
		}
		return waited(&wg)
	}
	// Half written: the first row has bytes, the last none yet.
	half := func() bool {
		for _, b := range clients {
			if b.buf[0] == 0 || b.buf[len(b.buf)-1] != 0 {
				return false
			}
		}
		return true
	}
	reset := func() {
		for _, b := range clients {
			clear(b.buf)
		}
	}
	start := time.Now()
	frozenAt := freezeMidway(t, s, gets, half, reset)
	open := sockets(t)
	wg.Wait()
	t.Logf("frozen %v into the gets; they answered after %v: %v / %v", frozenAt.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), answers[0], answers[1])
	for i, r := range answers {
		assert.Contains(t, r, int64(mooncakesdk.TransferFail), "client %d: no -800", i)
	}
	wantD, wantC := destroyed.fence(0xd1), control.fence(0xc1)
	ownSockets := newSockets(before, open)
	start = time.Now()
	require.NoError(t, destroyed.c.Destroy())
	t.Logf("Destroy took %v; sockets of the process: %d before the clients, %d during the gets, %d after Destroy", time.Since(start).Round(time.Millisecond), len(before), len(open), len(sockets(t)))
	require.NoError(t, s.pool.Resume())
	time.Sleep(3 * statusTimeout)
	assert.Equal(t, wantD, destroyed.buf, "the destroyed client's buffer was written after Destroy returned")
	t.Logf("the control's buffer (its client alive) after the provider resumed: written: %v; sockets the two clients had open mid-get: %d", !bytes.Equal(wantC, control.buf), len(ownSockets))
}

// newSockets is the sockets of now not in before.
func newSockets(before, now []string) []string {
	var out []string
	for _, s := range now {
		if !slices.Contains(before, s) {
			out = append(out, s)
		}
	}
	return out
}

// freezeTries is how many times freezeMidway starts the transfers
// before it gives up seeing them half done.
const freezeTries = 5

// freezeMidway starts transfers (start returns a channel closed once
// they all returned) and freezes s's provider the moment half says they
// are half done. A try whose transfers all returned before they were
// seen half done is made again after reset, freezeTries times in all.
// It returns how long into its try the provider was frozen.
func freezeMidway(t *testing.T, s *realStore, start func() <-chan struct{}, half func() bool, reset func()) time.Duration {
	t.Helper()
	for try := 1; try <= freezeTries; try++ {
		begun := time.Now()
		done := start()
	watch:
		for {
			if half() {
				require.NoError(t, s.pool.Freeze())
				return time.Since(begun)
			}
			select {
			case <-done:
				break watch
			default:
			}
		}
		t.Logf("try %d: the transfers ended before they were seen half done", try)
		reset()
	}
	t.Fatalf("the transfers were never seen half done in %d tries", freezeTries)
	return 0
}

// waited returns a channel closed once wg's goroutines returned.
func waited(wg *sync.WaitGroup) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}
