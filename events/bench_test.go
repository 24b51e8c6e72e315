package events_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"

	"github.com/go-zeromq/zmq4"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/events"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/node"
	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/patience"
)

// drain reads every batch a subscriber to endpoint gets until ctx ends:
// the cost of sending is in the figures.
func drain(b *testing.B, ctx context.Context, endpoint string) {
	sub := zmq4.NewSub(ctx)
	require.NoError(b, sub.Dial(endpoint))
	require.NoError(b, sub.SetOption(zmq4.OptionSubscribe, ""))
	go func() {
		defer sub.Close()
		for {
			if _, err := sub.Recv(); err != nil {
				return
			}
		}
	}()
}

// processCPU is the CPU time the process used so far, user and system,
// in nanoseconds: on a loaded machine a publish's cost, where its
// latency is mostly waiting for a CPU.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkPublishThroughTheNode is one publish of 16 rows of 4 KiB
// through a node over the embedded store, from the engine's submission
// to its quiesced, with events off, on, and on with a subscriber (in
// this process) reading them, in the same run: what events add to a publish, as time a publish
// takes (ns/op) and as CPU the process spends on it (cpu-ns/op: the
// node's, the engine's, the publisher's and the subscriber's, all in
// this process).
func BenchmarkPublishThroughTheNode(b *testing.B) {
	for _, c := range []struct {
		name    string
		on, sub bool
	}{{"events=off", false, false}, {"events=on", true, false}, {"events=on,subscriber", true, true}} {
		on := c.on
		b.Run(c.name, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			store, err := memdrv.NewBoundedStore(memdrv.StoreOptions{Capacity: 256 << 20})
			require.NoError(b, err)
			b.Cleanup(func() { _ = store.Close() })
			drv := memdrv.New(store, memdrv.Options{})
			b.Cleanup(func() { _ = drv.Close() })
			var p *events.Publisher
			var ev node.Events // nil, not a nil *Publisher: events off
			if on {
				p, err = events.Open(events.Config{Endpoint: "tcp://127.0.0.1:0"})
				require.NoError(b, err)
				b.Cleanup(func() { _ = p.Close() })
				if c.sub {
					drain(b, ctx, p.Endpoint())
				}
				ev = p
			}
			scope, _ := testScope(b, "")
			rig := startNode(b, ctx, drv, ev, scope, 4096)
			g := contract.Group{Region: 0}
			for i := range 8 {
				g.Slots = append(g.Slots, int32(i))
			}
			v := contract.View{Groups: []contract.Group{g, {Region: 1, Slots: g.Slots}}}
			cpu := processCPU(b)
			n := 0
			for i := 0; b.Loop(); i++ {
				n++
				for gi := range v.Groups {
					v.Groups[gi].Names = make([][]byte, 8)
					for j := range 8 {
						v.Groups[gi].Names[j] = fmt.Appendf(nil, "block-%d-%d-%d", i, gi, j)
					}
				}
				a, err := rig.lend.Publish(ctx, v, nodeclient.TransferOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := a.Wait(ctx); err != nil {
					b.Fatal(err)
				}
				<-a.Done()
			}
			b.ReportMetric(float64(processCPU(b)-cpu)/float64(n), "cpu-ns/op")
			if p != nil {
				s := p.Stats()
				b.ReportMetric(float64(s.Dropped), "dropped")
			}
		})
	}
}

// BenchmarkPublisherBlocks is what the publisher sustains: Stored calls
// of 16 names of 32 bytes, each a BlockStored, published (encoded, kept
// for replay, sent to a subscriber that reads them) by the end.
func BenchmarkPublisherBlocks(b *testing.B) {
	ctx, cancel := patience.For(b).Context(context.Background())
	defer cancel()
	p, err := events.Open(events.Config{Endpoint: "tcp://127.0.0.1:0"})
	require.NoError(b, err)
	defer p.Close()
	drain(b, ctx, p.Endpoint())
	scope, digest := testScope(b, "")
	names := make([][]byte, 16)
	for i := range names {
		names[i] = make([]byte, 32)
		names[i][0] = byte(i)
	}
	before := p.Stats()
	for b.Loop() {
		p.Stored(scope, digest, names)
	}
	require.NoError(b, p.Flush(ctx))
	s := p.Stats()
	published := s.Events - before.Events
	b.ReportMetric(float64(published)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(16*published)/b.Elapsed().Seconds(), "blocks/s")
	b.ReportMetric(float64(s.Batches-before.Batches)/b.Elapsed().Seconds(), "batches/s")
	b.ReportMetric(float64(s.Dropped-before.Dropped), "dropped")
}
