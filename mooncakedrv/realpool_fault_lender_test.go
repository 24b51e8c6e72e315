package mooncakedrv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// The fault matrix's traffic: rows of faultSlotBytes, cut by the backend
// into calls of faultCallRows rows, and by the driver into one part (one
// SDK call) per call, so that an operation's rows are exactly one put or
// get call's keys.
const (
	faultSlotBytes = 1 << 20
	faultCallRows  = 8
)

// faultLender is one backend of the fault matrix: a driver over a
// recording client of a real pool (its own client, its own key answers),
// one region of host memory bound under a hold, and a binding.Backend
// over it. Its memory is unmapped at the end of the test only if its
// Shutdown released the hold and its driver closed; otherwise memory,
// registration and client are kept for the life of the process.
type faultLender struct {
	t      *testing.T
	name   string
	mem    *memory
	hold   *hold
	client *recordingClient
	drv    *recordingDriver
	be     *binding.Backend
	stem   keys.Stem
	wake   chan struct{}
	out    *switchWriter

	// fence holds the seed of the pattern written into each slot whose
	// access ended, checked at the end of the test.
	fence map[int]string
	// done: shutdown ran; released: it released everything.
	done, released bool
	held           []string
}

// openFaultLender opens a lender named name of slots slots over s, its
// keys under prefix, for t: it logs to t's output and is shut down at
// the end of t if t did not.
func openFaultLender(t *testing.T, s *realStore, name string, slots int, prefix string) *faultLender {
	t.Helper()
	out := &switchWriter{w: t.Output()}
	l, err := newFaultLender(s.config, name, slots, prefix, out)
	require.NoError(t, err)
	l.t = t
	t.Cleanup(l.cleanup)
	return l
}

// newFaultLender opens a lender from the store config at config, its
// logs (warnings) to out, with no test of its own (the exiting client's
// process has none). On error it leaves nothing open.
func newFaultLender(config, name string, slots int, prefix string, out *switchWriter) (_ *faultLender, err error) {
	sc, err := mooncakesdk.LoadStoreConfig(config)
	if err != nil {
		return nil, err
	}
	b, err := syscall.Mmap(-1, 0, faultSlotBytes*slots, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	mem := &memory{bytes: b, region: contract.SlotRegion{
		Base: uintptr(unsafe.Pointer(&b[0])), SlotBytes: faultSlotBytes, SlotCount: slots, Len: int64(faultSlotBytes * slots), Kind: contract.Host,
	}}
	l := &faultLender{name: name, mem: mem, hold: &hold{}, wake: make(chan struct{}, 1), fence: map[int]string{}, out: out}
	logger := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelWarn})).With("lender", name)
	ctx, cancel := context.WithTimeout(context.Background(), realWait)
	defer cancel()
	c, err := mooncakesdk.Open(ctx, sc, logger)
	if err != nil {
		_ = syscall.Munmap(b)
		return nil, err
	}
	defer func() {
		// Nothing registered, or Bind undid it; unless it says a
		// registration may be live: then memory and client are kept.
		if err != nil && !errors.Is(err, binding.ErrRegistrationMayBeLive) {
			_ = c.Destroy()
			_ = syscall.Munmap(b)
		}
	}()
	l.client = newRecordingClient(c)
	cfg := ConfigFrom(sc.Mooncake)
	cfg.RowsPerCall, cfg.Logger = faultCallRows, logger
	// A Recycle's fresh client is recorded as the old one was.
	cfg.Reopen = func(ctx context.Context) (mooncakesdk.Client, error) {
		fresh, err := mooncakesdk.Open(ctx, sc, logger)
		if err != nil {
			return nil, err
		}
		l.client.Client = fresh // no call is in the SDK while a Recycle runs
		return l.client, nil
	}
	drv, err := New(l.client, cfg)
	if err != nil {
		return nil, err
	}
	l.drv = &recordingDriver{Driver: drv, base: mem.region.Base, slotBytes: faultSlotBytes}
	regions, err := binding.Bind(l.drv, []contract.SlotRegion{mem.region}, l.hold)
	if err != nil {
		return nil, err
	}
	l.be, err = binding.New(regions, binding.Config{KeyPrefix: prefix, Logger: logger, Wake: l.woken, MaxRowsPerCall: faultCallRows})
	if err != nil {
		return nil, err
	}
	l.stem, err = keys.NewStem(prefix)
	return l, err
}

// woken is the backend's Wake: it nudges outcome.
func (l *faultLender) woken() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// key is the store key of the row named name.
func (l *faultLender) key(name string) string {
	k, err := l.stem.Key([]byte(name))
	require.NoError(l.t, err)
	return k
}

// load writes each named row's content into its slot.
func (l *faultLender) load(names []string, slots []int) {
	for i, n := range names {
		tile(l.mem.slot(slots[i]), contentSeed(n))
	}
}

// holds reports whether slot s holds the content of the row named name.
func (l *faultLender) holds(s int, name string) bool {
	return bytes.Equal(l.mem.slot(s), faultContent(name, faultSlotBytes))
}

// outcome waits (bounded) for a's outcome.
func (l *faultLender) outcome(a contract.Attempt) contract.Outcome {
	l.t.Helper()
	return awaitOutcome(l.t, a, l.wake, "lender "+l.name+": ")
}

// settled waits (bounded) until the access of every operation recorded
// left Open.
func (l *faultLender) settled() {
	l.t.Helper()
	ctx, cancel := bound(l.t, realWait, "lender "+l.name+"'s operations settling").Context(context.Background())
	defer cancel()
	for _, r := range l.drv.recorded() {
		for r.op.Poll(nil).Access == contract.Open {
			if ctx.Err() != nil {
				l.t.Fatalf("lender %s: an operation's access still Open after its bound (%v, extended only while the process was starved)", l.name, realWait)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// roundTrip publishes the rows names from the first slots and fetches
// them back into the next ones: it reports whether every row was
// delivered both ways with its bytes, and what it saw.
func (l *faultLender) roundTrip(names []string) (ok bool, seen string) {
	l.t.Helper()
	n := len(names)
	pub, got := span(0, n), span(n, 2*n)
	l.load(names, pub)
	a, err := l.be.Publish(namedView(names, pub), nil)
	require.NoError(l.t, err)
	po := l.outcome(a)
	if po.Prefix() != n {
		l.settled()
		return false, fmt.Sprintf("publish %d/%d delivered", po.Prefix(), n)
	}
	for _, s := range got {
		clear(l.mem.slot(s))
	}
	a, err = l.be.Fetch(namedView(names, got), nil)
	require.NoError(l.t, err)
	fo := l.outcome(a)
	l.settled()
	if fo.Prefix() != n {
		return false, fmt.Sprintf("publish %d Ready, fetch %d/%d delivered (%v)", n, fo.Prefix(), n, fo.Fault)
	}
	for i, s := range got {
		if !l.holds(s, names[i]) {
			return false, fmt.Sprintf("fetch of %q delivered other bytes", names[i])
		}
	}
	return true, fmt.Sprintf("publish %d Ready, fetch %d Ready, bytes equal", n, n)
}

// fenceSlot writes a fresh pattern into slot s, whose access ended, to
// be checked by fences at the end.
func (l *faultLender) fenceSlot(s int) {
	seed := fmt.Sprintf("fence %s/%d|", l.name, s)
	tile(l.mem.slot(s), seed)
	l.fence[s] = seed
}

// fences returns how many slots were fenced and those whose pattern
// changed.
func (l *faultLender) fences() (checked int, touched []int) {
	want := make([]byte, faultSlotBytes)
	for s, seed := range l.fence {
		tile(want, seed)
		if !bytes.Equal(l.mem.slot(s), want) {
			touched = append(touched, s)
		}
	}
	return len(l.fence), touched
}

// shutdown shuts the backend down (bounded) and, if that released the
// hold, closes the driver; it returns what Shutdown said is still held.
func (l *faultLender) shutdown() []string {
	if l.done {
		return l.held
	}
	l.done = true
	ctx, cancel := context.WithTimeout(context.Background(), realWait)
	defer cancel()
	l.held = l.be.Shutdown(ctx)
	if l.held != nil {
		clientsKept.Add(1)
		l.out.toStderr()
		return l.held
	}
	assert.EqualValues(l.t, 1, l.hold.n.Load(), "lender %s: the hold was released once", l.name)
	if err := l.drv.Close(); err != nil {
		clientsKept.Add(1)
		l.t.Errorf("lender %s: Close after a Shutdown that released the hold: %v", l.name, err)
		return l.held
	}
	l.released = true
	return nil
}

// cleanup shuts down a lender the test did not, and unmaps the memory of
// a lender that released everything.
func (l *faultLender) cleanup() {
	l.shutdown()
	if l.released {
		_ = syscall.Munmap(l.mem.bytes)
		return
	}
	l.out.toStderr()
}
