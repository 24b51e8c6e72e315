package mooncakedrv

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
)

// realLender is a lender of the real-pool backend tests: a driver opened
// over a real pool through its store config (mooncakedrv.Open), one
// region of host memory bound to it under a hold (binding.Bind), and a
// binding.Backend over it. Unless kept, at the end of the test it shuts
// the backend down (requiring no label left and the hold released),
// closes the driver, and its memory is unmapped if the test passed.
type realLender struct {
	t    *testing.T
	mem  *memory
	hold *hold
	drv  *Driver
	be   *binding.Backend
	wake chan struct{}
}

// newRealLender opens a lender of slots slots of slotBytes over s, its
// keys under prefix. A kept lender's memory is never unmapped and its
// backend is left as the test leaves it: for a test whose access may
// never be proven ended.
func newRealLender(t *testing.T, s *realStore, slots int, slotBytes int64, prefix string, kept bool) *realLender {
	t.Helper()
	l := &realLender{t: t, hold: &hold{}, wake: make(chan struct{}, 1)}
	if kept {
		l.mem = keptMemory(t, slots, slotBytes)
	} else {
		l.mem = newMemory(t, slots, slotBytes) // its cleanup runs after the lender's
	}
	// A kept lender's driver and backend outlive the test: they log to
	// the process's stderr, never to the test's output.
	logger := testLogger(t)
	if kept {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	var err error
	l.drv, _, err = Open(t.Context(), s.config, logger)
	require.NoError(t, err)
	regions, err := binding.Bind(l.drv, []contract.SlotRegion{l.mem.region}, l.hold)
	require.NoError(t, err)
	l.be, err = binding.New(regions, binding.Config{KeyPrefix: prefix, Logger: logger, Wake: l.woken})
	require.NoError(t, err)
	if kept {
		clientsKept.Add(1)
	} else {
		t.Cleanup(l.close)
	}
	return l
}

func (l *realLender) woken() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// close shuts the backend down and closes the driver, as the owner's
// cleanup order says.
func (l *realLender) close() {
	ctx, cancel := bound(l.t, realWait, "the closing Shutdown").Context(context.Background())
	defer cancel()
	if held := l.be.Shutdown(ctx); held != nil {
		clientsKept.Add(1)
		l.t.Errorf("Shutdown at the end of the test still holds %v; the memory is kept", held)
		return
	}
	if n := l.hold.n.Load(); n != 1 {
		l.t.Errorf("the hold was released %d times, want 1", n)
	}
	if err := l.drv.Close(); err != nil {
		clientsKept.Add(1)
		l.t.Errorf("Close at the end of the test: %v", err)
	}
}

// outcome waits (bounded) for a's outcome.
func (l *realLender) outcome(a contract.Attempt) contract.Outcome {
	l.t.Helper()
	return awaitOutcome(l.t, a, l.wake, "")
}

// awaitOutcome waits (a patient bound of realWait) for a's outcome,
// looking again each time wake fires; it fails the test, naming who
// (with a's name), when none comes.
func awaitOutcome(t *testing.T, a contract.Attempt, wake <-chan struct{}, who string) contract.Outcome {
	t.Helper()
	ctx, cancel := bound(t, realWait, who+"an outcome").Context(context.Background())
	defer cancel()
	for {
		if o, ok := a.Outcome(); ok {
			return o
		}
		select {
		case <-wake:
		case <-ctx.Done():
			if o, ok := a.Outcome(); ok {
				return o
			}
			t.Fatalf("%s%v: no outcome within its bound (%v, extended only while the process was starved)", who, a, realWait)
		}
	}
}

// quiesced waits (bounded) for a to quiesce.
func (l *realLender) quiesced(a contract.Attempt) {
	l.t.Helper()
	if !bound(l.t, realWait, "quiescence").Wait(a.Done()) {
		l.t.Fatalf("%v did not quiesce within its bound (%v)", a, realWait)
	}
}

// view is a view of one group: row i named rowName(first+i) in slot
// slots[i].
func view(first int, slots ...int) contract.View {
	g := contract.Group{Slots: make([]int32, len(slots)), Names: make([][]byte, len(slots))}
	for i, s := range slots {
		g.Slots[i] = int32(s)
		g.Names[i] = []byte(rowName(first + i))
	}
	return contract.View{Groups: []contract.Group{g}}
}

// rowName is the name of row i of a view.
func rowName(i int) string { return fmt.Sprintf("row-%05d", i) }

// span is the slots [lo, hi).
func span(lo, hi int) []int {
	out := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// keptMemory is memory as newMemory maps it, never unmapped: a transfer
// the driver could not prove ended may still touch it, for the life of
// the process.
func keptMemory(t testing.TB, slots int, slotBytes int64) *memory {
	t.Helper()
	b, err := syscall.Mmap(-1, 0, int(slotBytes)*slots, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	return &memory{bytes: b, region: contract.SlotRegion{
		Base: uintptr(unsafe.Pointer(&b[0])), SlotBytes: slotBytes, SlotCount: slots, Len: slotBytes * int64(slots), Kind: contract.Host,
	}}
}
