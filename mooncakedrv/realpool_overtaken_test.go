package mooncakedrv

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// writerObjectBytes is the other writer's object: large enough that its
// transfer takes a good tenth of a second on loopback, so that it is seen
// in flight and frozen there.
const writerObjectBytes = 128 << 20

// A put overtaken after the master's put_start_discard_timeout_sec (2 s
// in this pool): a put in flight holds its key only that long.
//
// A real put cannot be held from inside its own process, so the first
// put is another writer's: this test binary run again (runWriter), which
// puts a large object under key K; as soon as a raw client's get of K
// answers -703 (the put started at the master, its transfer under way),
// the writer process is frozen (SIGSTOP), its put in flight for as long
// as the test likes. Then:
//
//  1. this driver's put of K answers 0 and the exists-check 0: NotReady;
//     its get of K answers -703: NotReady, the slot untouched;
//  2. the driver puts K again every 200 ms (a put never waits for the
//     discard timeout itself) until one is not NotReady: once the master
//     has discarded the stale reservation the put stores its own bytes
//     and is Ready;
//  3. the driver's get of K is Ready with its own bytes;
//  4. the writer is let go (SIGCONT): whatever the end of its put answers
//     (logged), K still holds the driver's bytes.
func TestRealOvertakenPut(t *testing.T) {
	s := startRealStore(t, nil)
	raw := openRawClient(t, s)
	r := openRealRig(t, s, 2, 64<<10, "kvshare-realpool/overtaken")
	name, w := freezeOtherWriterInFlight(t, s, raw, r)
	key := r.key(name)
	r.mem.fill(0, 0x3c)
	r.mem.fill(1, 0x77)
	mine, untouched := pattern(0x3c, 64<<10), pattern(0x77, 64<<10)

	put := r.put([]string{name}, 0)
	assert.Equal(t, []contract.RowStatus{contract.NotReady}, put.Rows, "a put of a key another writer has in flight")
	assert.Equal(t, contract.Ended, put.Access)
	st := r.get([]string{name}, 1)
	assert.Equal(t, []contract.RowStatus{contract.NotReady}, st.Rows, "a get of a key another writer has in flight")
	assert.Equal(t, contract.Ended, st.Access)
	assert.Equal(t, untouched, r.mem.slot(1), "a NotReady get writes nothing")

	overtake, cancel := bound(t, realWait, "a put overtaking the frozen one").Context(context.Background())
	defer cancel()
	notReady := 0
	for put.Rows[0] == contract.NotReady && overtake.Err() == nil {
		notReady++
		time.Sleep(200 * time.Millisecond)
		put = r.put([]string{name}, 0)
	}
	t.Logf("the put of %q was NotReady %d times before the master let it overtake the frozen one", key, notReady)
	require.Equal(t, []contract.RowStatus{contract.Ready}, put.Rows, "a put after the discard timeout stores its own bytes")
	assert.Equal(t, contract.Ended, put.Access)
	st = r.get([]string{name}, 1)
	assert.Equal(t, []contract.RowStatus{contract.Ready}, st.Rows)
	assert.Equal(t, mine, r.mem.slot(1), "the key holds the overtaking put's bytes")

	require.NoError(t, w.signal(syscall.SIGCONT))
	line, err := w.next(bound(t, realWait, "the other writer's next line"))
	require.NoError(t, err)
	t.Logf("the overtaken writer's put ended with %q once let go", line)
	if !bound(t, realWait, "the overtaken writer exiting").Wait(w.exited) {
		t.Fatal("the overtaken writer did not exit")
	}
	require.NoError(t, w.err)
	r.mem.fill(1, 0x77)
	st = r.get([]string{name}, 1)
	assert.Equal(t, []contract.RowStatus{contract.Ready}, st.Rows)
	assert.Equal(t, mine, r.mem.slot(1), "the end of the overtaken put changed nothing")
	obj, ok, err := raw.object(key, rawBufferBytes)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, mine, obj, "another client reads the overtaking put's bytes too")
}

// freezeOtherWriterInFlight starts the other writer on a fresh key of r
// and freezes it while its put is in flight (a raw get answers -703
// before and after the SIGSTOP). A put that ended before the freeze is
// tried again on a new key, three times in all. It returns the row's
// name and the frozen writer.
func freezeOtherWriterInFlight(t *testing.T, s *realStore, raw *rawClient, r *realRig) (string, *otherWriterProcess) {
	t.Helper()
	for attempt := 1; attempt <= 3; attempt++ {
		name := fmt.Sprintf("overtaken-%d", attempt)
		key := r.key(name)
		w := startOtherWriter(t, s, key, writerObjectBytes)
		if inFlight(t, raw, key) {
			require.NoError(t, w.signal(syscall.SIGSTOP))
			if inFlight(t, raw, key) {
				t.Logf("the other writer's put of %q is in flight, its process frozen (attempt %d)", key, attempt)
				return name, w
			}
		}
		t.Logf("the other writer's put of %q ended before it could be frozen (attempt %d)", key, attempt)
	}
	t.Fatal("the other writer's put was never caught in flight")
	return "", nil
}

// inFlight polls key with a raw get until the store answers -703 (a put
// of it in flight: true) or anything but -704 (false); -704 means the
// put has not started at the master yet. The poll is bounded by a
// patient bound of realWait.
func inFlight(t *testing.T, raw *rawClient, key string) bool {
	t.Helper()
	ctx, cancel := bound(t, realWait, "the other writer's put starting").Context(context.Background())
	defer cancel()
	for ctx.Err() == nil {
		_, code, err := raw.get(key, 4096)
		require.NoError(t, err)
		switch code {
		case mooncakesdk.ReplicaIsNotReady:
			return true
		case mooncakesdk.ObjectNotFound:
			continue
		}
		return false
	}
	t.Fatalf("the other writer's put of %q never started", key)
	return false
}
