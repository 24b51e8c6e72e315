package telemetry_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/patience"
)

const (
	slotBytes = 4096
	slots     = 16
	prefix    = "telemetry"
)

// lender is one lender's staging memory lent to a backend over a memdrv
// driver. Its memory is freed at the end of the test only if the
// backend gave the hold back; otherwise it stays mapped.
type lender struct {
	mem     *memdrv.Memory
	driver  *memdrv.Driver
	backend *binding.Backend
	woke    chan struct{}
}

type hold struct{}

func (hold) Release() {}

func newLender(t *testing.T, store *memdrv.Store) *lender {
	t.Helper()
	mem, err := memdrv.Alloc(slotBytes, slots, contract.Host)
	require.NoError(t, err)
	l := &lender{mem: mem, driver: memdrv.New(store, memdrv.Options{}), woke: make(chan struct{}, 1)}
	regions, err := binding.Bind(l.driver, []contract.SlotRegion{mem.Region}, hold{})
	require.NoError(t, err)
	l.backend, err = binding.New(regions, binding.Config{
		KeyPrefix: prefix,
		Logger:    slog.New(slog.DiscardHandler),
		Wake: func() {
			select {
			case l.woke <- struct{}{}:
			default:
			}
		},
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		// Shutdown returns early when what is left can never change
		// (an unprovable call); the bound only guards against a hang.
		ctx, cancel := patience.For(t).Context(context.Background())
		defer cancel()
		if held := l.backend.Shutdown(ctx); len(held) == 0 {
			require.NoError(t, l.driver.Close())
			require.NoError(t, l.mem.Free())
		}
	})
	return l
}

// view returns a one-group view of names at slots from first on.
func view(first int, names ...string) contract.View {
	g := contract.Group{}
	for i, n := range names {
		g.Slots = append(g.Slots, int32(first+i))
		g.Names = append(g.Names, []byte(n))
	}
	return contract.View{Groups: []contract.Group{g}}
}

// quiesced waits for a's quiescence and returns its outcome.
func quiesced(t *testing.T, a contract.Attempt) contract.Outcome {
	t.Helper()
	<-a.Done()
	o, ok := a.Outcome()
	require.True(t, ok)
	return o
}

// outcome waits, through the backend's wake, until a's outcome is known.
func (l *lender) outcome(t *testing.T, a contract.Attempt) contract.Outcome {
	t.Helper()
	for {
		if o, ok := a.Outcome(); ok {
			return o
		}
		<-l.woke
	}
}

// key returns the store key the backend makes of name.
func key(t *testing.T, name string) string {
	t.Helper()
	stem, err := keys.NewStem(prefix)
	require.NoError(t, err)
	k, err := stem.Key([]byte(name))
	require.NoError(t, err)
	return k
}
