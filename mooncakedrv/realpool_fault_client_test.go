package mooncakedrv

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// sdkKind names a batch call of the SDK as the fault matrix records it.
type sdkKind string

// The three batch calls a driver makes.
const (
	kindPut    sdkKind = "put"    // batch_put_from
	kindGet    sdkKind = "get"    // batch_get_into
	kindExists sdkKind = "exists" // batch_is_exist
)

// sdkAnswer is what one batch call answered for one key: its per-key
// code, or the whole call's error (then no code was written).
type sdkAnswer struct {
	kind sdkKind
	code int64
	err  error
	call *sdkSpan // the call that answered (it may carry other parts' keys)
}

// sdkSpan is when one batch call was inside the SDK.
type sdkSpan struct {
	kind          sdkKind
	began, ended  time.Time // ended is zero while the call is inside
	keys, failing int       // keys in the call; keys that answered an error or a negative code
	names         []string  // the keys, in call order
	// unprovable: an answer of the call leaves a transfer that may
	// still run (TRANSFER_FAIL for a key of a put or get, or the whole
	// call failing short of an argument error or a destroyed client).
	unprovable bool
}

// recordingClient is a real client of a pool with every batch call the
// driver makes recorded: each key's answers, in order, and each call's
// span. It changes nothing the store answers. The fault matrix reads the
// answers to decide what each row's verdict and each operation's access
// must be (the verdict table), and the spans to check that a fault struck
// while calls were inside the SDK.
type recordingClient struct {
	mooncakesdk.Client

	mu      sync.Mutex
	answers map[string][]sdkAnswer
	spans   []*sdkSpan
}

// newRecordingClient wraps c.
func newRecordingClient(c mooncakesdk.Client) *recordingClient {
	return &recordingClient{Client: c, answers: map[string][]sdkAnswer{}}
}

// enter records a call of kind over keys entering the SDK.
func (c *recordingClient) enter(kind sdkKind, keys *mooncakesdk.KeyList) *sdkSpan {
	s := &sdkSpan{kind: kind, began: time.Now(), keys: keys.Len()}
	for i := range keys.Len() {
		s.names = append(s.names, string(keys.Key(i)))
	}
	c.mu.Lock()
	c.spans = append(c.spans, s)
	c.mu.Unlock()
	return s
}

// leave records the call's answers: code(i) for key i, or err for all.
func (c *recordingClient) leave(s *sdkSpan, keys *mooncakesdk.KeyList, err error, code func(i int) int64) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	s.ended = now
	s.unprovable = err != nil && wholeCallUnprovable(err)
	for i := range keys.Len() {
		a := sdkAnswer{kind: s.kind, err: err, call: s}
		if err == nil {
			a.code = code(i)
		}
		if err != nil || a.code < 0 {
			s.failing++
		}
		if err == nil && s.kind != kindExists && mooncakesdk.Code(a.code) == mooncakesdk.TransferFail {
			s.unprovable = true
		}
		k := string(keys.Key(i))
		c.answers[k] = append(c.answers[k], a)
	}
}

// BatchPutFromList records the put and its answers.
func (c *recordingClient) BatchPutFromList(keys *mooncakesdk.KeyList, bufs []uintptr, sizes []uint64, results []int64) error {
	s := c.enter(kindPut, keys)
	err := c.Client.BatchPutFromList(keys, bufs, sizes, results)
	c.leave(s, keys, err, func(i int) int64 { return results[i] })
	return err
}

// BatchGetIntoList records the get and its answers.
func (c *recordingClient) BatchGetIntoList(keys *mooncakesdk.KeyList, bufs []uintptr, sizes []uint64, results []int64) error {
	s := c.enter(kindGet, keys)
	err := c.Client.BatchGetIntoList(keys, bufs, sizes, results)
	c.leave(s, keys, err, func(i int) int64 { return results[i] })
	return err
}

// BatchIsExistList records the exists-check and its answers.
func (c *recordingClient) BatchIsExistList(keys *mooncakesdk.KeyList, results []int32) error {
	s := c.enter(kindExists, keys)
	err := c.Client.BatchIsExistList(keys, results)
	c.leave(s, keys, err, func(i int) int64 { return int64(results[i]) })
	return err
}

// callsMade returns the keys of each call so far, in the order the
// calls entered the SDK, each as kind then keys.
func (c *recordingClient) callsMade() []sdkSpan {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]sdkSpan, len(c.spans))
	for i, s := range c.spans {
		out[i] = *s
	}
	return out
}

// answersOf returns a copy of key's answers so far.
func (c *recordingClient) answersOf(key string) []sdkAnswer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sdkAnswer(nil), c.answers[key]...)
}

// calls counts the calls of kind that have returned (done) and that are
// inside the SDK now.
func (c *recordingClient) calls(kind sdkKind) (done, inside int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.spans {
		switch {
		case s.kind != kind:
		case s.ended.IsZero():
			inside++
		default:
			done++
		}
	}
	return done, inside
}

// straddles counts the calls of kind that were inside the SDK at when:
// entered before it and returned after it (or have not returned).
func (c *recordingClient) straddles(kind sdkKind, when time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range c.spans {
		if s.kind == kind && s.began.Before(when) && (s.ended.IsZero() || s.ended.After(when)) {
			n++
		}
	}
	return n
}

// forget drops everything recorded so far: the matrix records only the
// traffic in flight when the fault strikes, not the rows seeded before.
func (c *recordingClient) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.answers)
	c.spans = nil
}

// waitCalls waits, polling within a patient bound of realWait, until ok
// holds of the recorded calls; it reports whether it did.
func waitCalls(t testing.TB, ok func() bool) bool {
	t.Helper()
	ctx, cancel := bound(t, realWait, "the recorded calls").Context(context.Background())
	defer cancel()
	for !ok() {
		if ctx.Err() != nil {
			return ok()
		}
		time.Sleep(time.Millisecond)
	}
	return true
}
