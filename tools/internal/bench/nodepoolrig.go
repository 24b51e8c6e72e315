package bench

import (
	"context"
	"errors"
	"log/slog"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/node"
	"github.com/kvshare/kvshare/node/driverview"
	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/tools/internal/runprefix"
)

// nodePoolRig is measurement 8's stage over a real pool: one Mooncake
// driver owning the pool's client; a node in this process serving it,
// reached through nodeclient with one lend per row size; and an
// in-process lender of the same slots (one region per row size) bound
// through a view of the same driver. Each side keeps its keys under a
// prefix of its own, below the run's.
type nodePoolRig struct {
	o        Options
	target   *poolTarget
	workers  int
	prefix   string
	inStem   keys.Stem
	nodeStem keys.Stem
	drv      contract.Driver
	inproc   *lender
	served   nodeServer
	lends    []*nodeclient.Lend
}

// newNodePoolRig builds the stage over target. On error what was built
// is given back and target closed.
func newNodePoolRig(ctx context.Context, o Options, target *poolTarget) (*nodePoolRig, error) {
	cfg := target.driverConfig()
	r := &nodePoolRig{o: o, target: target, workers: cfg.Workers}
	var err error
	if r.prefix, err = runprefix.New(target.config.Blob.KeyPrefix, "bench"); err != nil {
		return nil, errors.Join(err, target.client.Destroy(), target.close())
	}
	inPrefix, nodePrefix := r.prefix+"/in-process", r.prefix+"/node"
	if r.inStem, err = keys.NewStem(inPrefix); err != nil {
		return nil, errors.Join(err, target.client.Destroy(), target.close())
	}
	if r.nodeStem, err = keys.NewStem(nodePrefix); err != nil {
		return nil, errors.Join(err, target.client.Destroy(), target.close())
	}
	drv, err := mooncakedrv.New(target.client, cfg)
	if err != nil {
		return nil, errors.Join(err, target.client.Destroy(), target.close())
	}
	r.drv = drv
	var mems []*memdrv.Memory
	for _, rs := range o.Pool.RowSizes {
		m, err := memdrv.Alloc(rs, int(o.Pool.Bytes/rs), contract.Host)
		if err != nil {
			for _, m := range mems {
				err = errors.Join(err, m.Free())
			}
			return nil, errors.Join(err, closeIdle(drv), target.close())
		}
		fill(m.Bytes, byte(len(mems)+1))
		mems = append(mems, m)
	}
	caps := binding.Config{KeyPrefix: inPrefix, MaxRowsPerCall: target.config.Blob.RowsPerCall, MaxBytesPerCall: target.config.Blob.BytesPerCall}
	view := driverview.NewShared(drv).View()
	if r.inproc, err = lendMemory(view.Driver(), caps, observed(o, Node), mems...); err != nil {
		if errors.Is(err, errMemoryKept) {
			return nil, err // the driver stays open under the kept memory
		}
		for _, m := range mems {
			err = errors.Join(err, m.Free())
		}
		return nil, errors.Join(err, closeIdle(drv), target.close())
	}
	quiet := slog.New(slog.DiscardHandler)
	err = r.served.start(ctx, node.Config{Driver: drv, KeyPrefix: nodePrefix, MaxRowsPerCall: caps.MaxRowsPerCall, MaxBytesPerCall: caps.MaxBytesPerCall, Logger: quiet})
	for _, rs := range o.Pool.RowSizes {
		if err != nil {
			break
		}
		var l *nodeclient.Lend
		l, err = r.served.lend(ctx, rs, int(o.Pool.Bytes/rs))
		r.lends = append(r.lends, l)
	}
	if err != nil {
		return nil, errors.Join(err, r.close())
	}
	return r, nil
}

// close gives everything back in the owners' order: the lends returned,
// the client closed and the node shut down; the in-process lender
// released and its memory freed; the driver (and with it the pool's
// client) closed once nothing is held; the pool stopped. Memory still
// held is named and kept.
func (r *nodePoolRig) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	held, err := r.served.close(ctx, r.lends...)
	errs := []error{err}
	if r.inproc != nil {
		if err := r.inproc.close(); err != nil {
			held = true
			errs = append(errs, err)
		}
	}
	if held {
		return errors.Join(errs...) // the driver stays open under the memory kept
	}
	errs = append(errs, closeIdle(r.drv), r.target.close())
	return errors.Join(errs...)
}
