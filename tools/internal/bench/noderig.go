package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/trace"
	"time"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/node"
	"github.com/kvshare/kvshare/nodeclient"
)

// nodeRig is measurement 8's two paths over one embedded bounded store:
// an in-process lender (a backend over a memdrv driver of its own) and
// a node started in this process, serving the same store through a
// driver of the same options, which an engine reaches through
// nodeclient over a real Unix socket, lending a sealed memfd of the
// same slots. Each side keeps its keys under its own prefix.
type nodeRig struct {
	store  *memdrv.Store
	inproc *lender
	drv    *memdrv.Driver
	served nodeServer
	lend   *nodeclient.Lend
}

// nodeServer is a node served in this process on a socket in a
// temporary folder, and an engine's client of it.
type nodeServer struct {
	dir    string
	node   *node.Node
	stop   context.CancelFunc
	served chan error
	client *nodeclient.Client
}

// start serves a node of cfg (its Socket set here) and dials it.
func (s *nodeServer) start(ctx context.Context, cfg node.Config) error {
	dir, err := os.MkdirTemp("", "kvshare-bench-node")
	if err != nil {
		return err
	}
	s.dir = dir
	cfg.Socket = filepath.Join(dir, "node.sock")
	if s.node, err = node.New(cfg); err != nil {
		return err
	}
	l, err := node.Listen(cfg.Socket, 0o600)
	if err != nil {
		return err
	}
	serveCtx, stop := context.WithCancel(context.Background())
	s.stop, s.served = stop, make(chan error, 1)
	go func() { s.served <- s.node.Serve(serveCtx, l) }()
	s.client, err = nodeclient.Dial(ctx, cfg.Socket, nodeclient.Options{Engine: "bench", Logger: cfg.Logger})
	return err
}

// lend lends the node slots rows of rowBytes (one region), every page
// touched.
func (s *nodeServer) lend(ctx context.Context, rowBytes int64, slots int) (*nodeclient.Lend, error) {
	l, err := s.client.Lend(ctx, nodeclient.Geometry{SlotBytes: rowBytes, SlotCount: slots, Regions: 1})
	if err != nil {
		return nil, err
	}
	for i := range slots {
		fill(l.Slot(0, i), 0x5a)
	}
	return l, nil
}

// close returns lends (the engine's, already returned or not), closes
// the client and shuts the node down; held reports memory the node
// still holds (its driver must then stay open).
func (s *nodeServer) close(ctx context.Context, lends ...*nodeclient.Lend) (held bool, err error) {
	var errs []error
	for _, l := range lends {
		if l != nil {
			errs = append(errs, l.Return(ctx))
		}
	}
	if s.client != nil {
		errs = append(errs, s.client.Close(ctx))
	}
	if s.node != nil {
		if h := s.node.Shutdown(ctx); len(h) > 0 {
			held = true
			errs = append(errs, fmt.Errorf("bench: the node still holds %v (memory kept)", h))
		}
	}
	if s.stop != nil {
		s.stop()
		if err := <-s.served; err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, node.ErrShutDown) {
			errs = append(errs, err)
		}
	}
	if s.dir != "" {
		errs = append(errs, os.RemoveAll(s.dir))
	}
	return held, errors.Join(errs...)
}

// newNodeRig builds both paths with slots rows of rowBytes a side and a
// store that holds capacity bytes.
func newNodeRig(ctx context.Context, rowBytes int64, slots int, capacity int64, workers int, obs observation) (*nodeRig, error) {
	store, err := memdrv.NewBoundedStore(memdrv.StoreOptions{Capacity: capacity, ChunkBytes: chunkFor(rowBytes), HugePages: hostmem.HugePages2MiB})
	if err != nil {
		return nil, err
	}
	quiet := slog.New(slog.DiscardHandler)
	r := &nodeRig{store: store}
	r.inproc, err = newLender(memdrv.New(store, memdrv.Options{Workers: workers, Logger: quiet}), rowBytes, slots, binding.Config{KeyPrefix: "bench/node/in-process"}, obs)
	if err != nil {
		return nil, errors.Join(err, store.Close())
	}
	if err := r.startNode(ctx, rowBytes, slots, workers, quiet); err != nil {
		return nil, errors.Join(err, r.close())
	}
	return r, nil
}

// startNode starts the node over a driver of its own on the rig's store,
// dials it and lends it slots rows of rowBytes, every page touched.
func (r *nodeRig) startNode(ctx context.Context, rowBytes int64, slots, workers int, quiet *slog.Logger) error {
	r.drv = memdrv.New(r.store, memdrv.Options{Workers: workers, Logger: quiet})
	if err := r.served.start(ctx, node.Config{Driver: r.drv, KeyPrefix: "bench/node/node", Logger: quiet}); err != nil {
		return err
	}
	var err error
	r.lend, err = r.served.lend(ctx, rowBytes, slots)
	return err
}

// close gives everything back in the owners' order: the lend returned
// and the client closed, the node shut down with nothing held, its
// driver drained and closed, the in-process lender released, the store
// closed last. Memory still held is named and kept.
func (r *nodeRig) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	nodeHeld, err := r.served.close(ctx, r.lend)
	errs := []error{err}
	if r.drv != nil && !nodeHeld {
		if !r.drv.Drain(ctx) {
			nodeHeld = true
			errs = append(errs, errors.New("bench: the node's driver did not drain"))
		} else {
			errs = append(errs, r.drv.Close())
		}
	}
	inHeld := false
	if r.inproc != nil {
		if err := r.inproc.close(); err != nil {
			inHeld = true
			errs = append(errs, err)
		}
	}
	if !nodeHeld && !inHeld {
		errs = append(errs, r.store.Close())
	}
	return errors.Join(errs...)
}

// sideTimes is one submission's times on one side: submission to its
// outcome, and to its quiescence.
type sideTimes struct{ outcome, quiesced time.Duration }

// inProcess submits v in direction dir to the in-process backend and
// times it; every row must come back Ready.
func (r *nodeRig) inProcess(dir contract.Direction, v contract.View) (sideTimes, error) {
	defer sampleRegion("in-process", dir, v.Rows()).End()
	start := time.Now()
	var a contract.Attempt
	var err error
	if dir == contract.GetDir {
		a, err = r.inproc.backend.Fetch(v, nil)
	} else {
		a, err = r.inproc.backend.Publish(v, nil)
	}
	if err != nil {
		return sideTimes{}, fmt.Errorf("bench: in-process %s: %w", dirName(dir), err)
	}
	return timed(start, a, v.Rows(), "in-process "+dirName(dir))
}

// throughNode submits v in direction dir through the node and times it;
// every row must come back Ready.
func (r *nodeRig) throughNode(ctx context.Context, dir contract.Direction, v contract.View) (sideTimes, error) {
	defer sampleRegion("node", dir, v.Rows()).End()
	start := time.Now()
	var a *nodeclient.Attempt
	var err error
	if dir == contract.GetDir {
		a, err = r.lend.Fetch(ctx, v, nodeclient.TransferOptions{})
	} else {
		a, err = r.lend.Publish(ctx, v, nodeclient.TransferOptions{})
	}
	if err != nil {
		return sideTimes{}, fmt.Errorf("bench: %s through the node: %w", dirName(dir), err)
	}
	return timed(start, a, v.Rows(), dirName(dir)+" through the node")
}

// timed waits for a's outcome, then its quiescence, and checks that
// every one of rows was delivered.
func timed(start time.Time, a contract.Attempt, rows int, what string) (sideTimes, error) {
	<-a.Known()
	t := sideTimes{outcome: time.Since(start)}
	<-a.Done()
	t.quiesced = time.Since(start)
	o, _ := a.Outcome()
	if n := delivered(o); n != rows {
		return t, fmt.Errorf("bench: %s: %d of %d rows delivered (fault: %v)", what, n, rows, o.Fault)
	}
	return t, nil
}

// sampleRegion marks one latency sample in an execution trace (kvshare
// bench --trace) as a region named by its side, direction and rows, such
// as "node publish 256": the goroutine wake-ups inside it are that
// sample's. Without a trace it costs a check.
func sampleRegion(side string, dir contract.Direction, rows int) *trace.Region {
	if !trace.IsEnabled() {
		return trace.StartRegion(context.Background(), "")
	}
	return trace.StartRegion(context.Background(), fmt.Sprintf("%s %s %d", side, dirName(dir), rows))
}
