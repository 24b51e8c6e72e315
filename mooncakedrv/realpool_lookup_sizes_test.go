package mooncakedrv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// sizeCode is get_size's answer as a code: 0 and up a size, else the
// error's code.
func sizeCode(t *testing.T, s mooncakesdk.Sizer, key string) mooncakesdk.Code {
	t.Helper()
	n, err := s.GetSize(key)
	var ce *mooncakesdk.CallError
	if errors.As(err, &ce) {
		return ce.Code
	}
	require.NoError(t, err)
	return mooncakesdk.Code(n)
}

// What a real pool answers a lookup with: batch_is_exist says 1 for a
// complete object and 0 both for an absent key and for one whose put is
// in flight; get_size tells those two apart (REPLICA_IS_NOT_READY while
// the put is in flight, OBJECT_NOT_FOUND for an absent key), at one RPC
// a key. The put is held in flight by freezing the only provider while
// another client puts; it ends -800 (its buffer is then kept for good).
// The figures it logs are the evidence of the lookup decision in
// docs/design/mooncakedrv.md (section "Lookups").
func TestRealLookupAnswers(t *testing.T) {
	s := startRealStore(t, nil)
	writer, reader := openRawClient(t, s), openRawClient(t, s)
	sizer, ok := reader.c.(mooncakesdk.Sizer)
	require.True(t, ok, "the purego client answers get_size")
	const prefix = "kvshare-realpool/lookup/"
	data := bytes.Repeat([]byte{7}, 64<<10)
	code, err := reader.put(prefix+"stored", data)
	require.NoError(t, err)
	require.Zero(t, code)

	// The cost of asking, with the pool healthy: 256 keys in one
	// batch_is_exist against 256 get_size calls.
	keys := make([]string, 256)
	for i := range keys {
		keys[i] = fmt.Sprintf("%sabsent-%d", prefix, i)
	}
	keys[0] = prefix + "stored"
	res := make([]int32, len(keys))
	start := time.Now()
	require.NoError(t, reader.c.BatchIsExist(keys, res))
	batch := time.Since(start)
	start = time.Now()
	for _, k := range keys {
		sizeCode(t, sizer, k)
	}
	single := time.Since(start)
	t.Logf("256 keys: batch_is_exist %v in one call; get_size %v in 256 calls (%v a key)", batch, single, single/256)
	assert.Equal(t, int32(1), res[0])
	assert.Equal(t, int32(0), res[1])
	assert.Equal(t, mooncakesdk.Code(len(data)), sizeCode(t, sizer, prefix+"stored"), "get_size of a complete object: its size")
	assert.Equal(t, mooncakesdk.ObjectNotFound, sizeCode(t, sizer, prefix+"absent-1"))

	// A put in flight: the provider frozen, the writer's put blocks.
	require.NoError(t, s.pool.Freeze())
	done := make(chan mooncakesdk.Code, 1)
	go func() {
		c, err := writer.put(prefix+"in-flight", data)
		if err != nil {
			t.Errorf("the put in flight: %v", err)
		}
		done <- c
	}()
	var seen mooncakesdk.Code
	started, cancel := bound(t, realWait, "the put in flight reaching the master").Context(context.Background())
	defer cancel()
	for started.Err() == nil {
		if seen = sizeCode(t, sizer, prefix+"in-flight"); seen != mooncakesdk.ObjectNotFound {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	exist, err := reader.exists(prefix + "in-flight")
	require.NoError(t, err)
	t.Logf("a put in flight: get_size %v, batch_is_exist %d", seen, exist)
	assert.Equal(t, mooncakesdk.ReplicaIsNotReady, seen, "get_size tells a put in flight")
	assert.Zero(t, exist, "batch_is_exist does not")
	require.NoError(t, s.pool.Resume())
	t.Logf("the put in flight answered %v", <-done)
}
