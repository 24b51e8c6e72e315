package drivermetrics_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/patience"
)

type hold struct{}

func (hold) Release() {}

// lender is staging memory lent to a backend over a driver on the kit.
type lender struct {
	backend *binding.Backend
	woke    chan struct{}
}

func newLender(t *testing.T, d contract.Driver) *lender {
	t.Helper()
	mem, err := memdrv.Alloc(4096, 16, contract.Host)
	require.NoError(t, err)
	regions, err := binding.Bind(d, []contract.SlotRegion{mem.Region}, hold{})
	require.NoError(t, err)
	l := &lender{woke: make(chan struct{}, 1)}
	l.backend, err = binding.New(regions, binding.Config{KeyPrefix: "telemetry", Logger: slog.New(slog.DiscardHandler), Wake: func() {
		select {
		case l.woke <- struct{}{}:
		default:
		}
	}})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := patience.For(t).Context(context.Background())
		defer cancel()
		if held := l.backend.Shutdown(ctx); len(held) == 0 {
			require.NoError(t, mem.Free())
		}
	})
	return l
}

// submit runs one attempt over names at slots from first on, and waits
// until its outcome is known.
func (l *lender) submit(t *testing.T, publish bool, first int, names ...string) contract.Outcome {
	t.Helper()
	g := contract.Group{}
	for i, n := range names {
		g.Slots = append(g.Slots, int32(first+i))
		g.Names = append(g.Names, []byte(n))
	}
	v := contract.View{Groups: []contract.Group{g}}
	var a contract.Attempt
	var err error
	if publish {
		a, err = l.backend.Publish(v, nil)
	} else {
		a, err = l.backend.Fetch(v, nil)
	}
	require.NoError(t, err)
	for {
		if o, ok := a.Outcome(); ok {
			return o
		}
		<-l.woke
	}
}

// toyStore is a store on the kit with counters of its own: every put
// lands, every get misses, and each call adds one to its calls counter.
type toyStore struct {
	calls atomic.Int64
	level atomic.Int64
	extra []drivekit.Counter // reported after its own
}

func (s *toyStore) Transfer(c *drivekit.Call) {
	s.calls.Add(1)
	for i := range c.Ends {
		c.Ends[i].Status = contract.Miss
		if c.Dir == contract.PutDir {
			c.Ends[i].Status = contract.Ready
		}
	}
}

func (s *toyStore) Counters(dst []drivekit.Counter) []drivekit.Counter {
	dst = append(dst,
		drivekit.Counter{Name: "toy_calls", Unit: "{call}", Description: "Calls the toy store answered.", Value: s.calls.Load()},
		drivekit.Counter{Name: "toy_level", Unit: "{thing}", Description: "A level the test sets.", Level: true, Value: s.level.Load()},
	)
	return append(dst, s.extra...)
}
