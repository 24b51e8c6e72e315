package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/redisdrv"
	"github.com/kvshare/kvshare/tools/internal/runprefix"
)

// redisRig is measurement 7's stage: kvshare (a backend over a Redis
// driver with a client of its own, one a node on a cluster), and raw
// clients built from the same client option for the floor, the plain
// loop and the deletes (one, or one a cluster node); one region of slots
// per row size, lent to kvshare and used by the floor and the plain loop
// too (never at the same time). Each side stores under a prefix of its
// own.
type redisRig struct {
	o      Options
	target *redisTarget
	kv     *lender
	rd     *redisdrv.Driver // kvshare's driver, for its counters
	raw    *redisNodes
	// beside is the stage over the cluster measured beside the server
	// (only its kvshare side runs), nil when none.
	beside *redisRig
	floor  *redisFloor
	plain  *redisPlain
	drv    redisdrv.Config    // the driver's settings, defaults filled in
	caps   redisdrv.Config    // the floor's parts: the driver's, or the backend's caps where tighter
	prefix string             // the run's; each side's is prefix/<side>
	stems  map[byte]keys.Stem // side → its keys' stem, prefix/<side>
}

// The sides of measurement 7, as their names' first byte and their
// prefixes' last segment.
const (
	sideKvshare = 'k'
	sideFloor   = 'f'
	sidePlain   = 'p'
)

var sideNames = map[byte]string{sideKvshare: "kvshare", sideFloor: "floor", sidePlain: "plain"}

// newRedisRig builds the stage over target: the raw clients, the driver
// (owning clients of its own), one region per row size lent to a
// backend (observed as target.lender). On error everything built is
// given back, the target too.
func newRedisRig(ctx context.Context, o Options, target *redisTarget) (*redisRig, error) {
	r := &redisRig{o: o, target: target, stems: map[byte]keys.Stem{}}
	sc := target.config
	r.drv = sc.Redis.DriverConfig()
	r.caps = r.drv
	if b := sc.Blob; b.RowsPerCall > 0 {
		r.caps.RowsPerCall = min(r.caps.RowsPerCall, b.RowsPerCall)
	}
	if b := sc.Blob; b.BytesPerCall > 0 {
		r.caps.BytesPerCall = min(r.caps.BytesPerCall, b.BytesPerCall)
	}
	var err error
	if r.prefix, err = runprefix.New(sc.Blob.KeyPrefix, "bench"); err != nil {
		return nil, errors.Join(err, target.close())
	}
	for side, name := range sideNames {
		if r.stems[side], err = keys.NewStem(r.prefix + "/" + name); err != nil {
			return nil, errors.Join(err, target.close())
		}
	}
	if r.raw, err = openRedisNodes(ctx, sc); err != nil {
		return nil, errors.Join(err, target.close())
	}
	r.floor = &redisFloor{nodes: r.raw, workers: r.drv.Workers, callTimeout: r.drv.CallTimeout}
	r.plain = &redisPlain{nodes: r.raw, workers: r.drv.Workers, bound: r.floor.timeout}
	drv, err := redisdrv.OpenConfig(ctx, sc, slog.New(slog.DiscardHandler))
	if err != nil {
		r.raw.close()
		return nil, errors.Join(err, target.close())
	}
	r.rd = drv
	var mems []*memdrv.Memory
	for _, rs := range o.Redis.RowSizes {
		m, err := memdrv.Alloc(rs, o.Redis.rows(rs), contract.Host)
		if err != nil {
			for _, m := range mems {
				err = errors.Join(err, m.Free())
			}
			r.raw.close()
			return nil, errors.Join(err, closeIdle(drv), target.close())
		}
		fill(m.Bytes, byte(len(mems)+1))
		mems = append(mems, m)
	}
	cfg := binding.FromBlob(sc.Blob)
	cfg.KeyPrefix = r.stems[sideKvshare].Prefix()
	r.kv, err = lendMemory(drv, cfg, observation{observe: o.Observe, lender: target.lender}, mems...)
	if err != nil {
		if !errors.Is(err, errMemoryKept) {
			for _, m := range mems {
				err = errors.Join(err, m.Free())
			}
		}
		r.raw.close()
		return nil, errors.Join(err, target.close())
	}
	return r, nil
}

// close gives kvshare's lender back (closing the driver closes its
// clients), closes the raw clients and stops a server started for the
// run; the stage beside too.
func (r *redisRig) close() error {
	err := r.kv.close()
	r.raw.close()
	err = errors.Join(err, r.target.close())
	if r.beside != nil {
		err = errors.Join(err, r.beside.close())
	}
	return err
}

// parts counts the parts kvshare's driver ran, and those whose rows lay
// on more than one cluster node (zero without a stage).
func (r *redisRig) parts() (parts, split int64) {
	if r == nil {
		return 0, 0
	}
	s := r.rd.Stats()
	return s.Parts, s.PartsSplit
}

// keys are the keys of one side's rows in one round, as the backend
// builds them: the side's prefix, "/v1/", the name in hex. The names are
// fresh in every round.
func (r *redisRig) keys(side byte, round, n int) ([][]byte, []string, error) {
	names := make([][]byte, n)
	ks := make([]string, n)
	for i := range names {
		names[i] = rowName(side, round<<32|i)
		k, err := r.stems[side].Key(names[i])
		if err != nil {
			return nil, nil, err
		}
		ks[i] = k
	}
	return names, ks, nil
}

// slots are the first n slots of region ri.
func (r *redisRig) slots(ri, n int, rowBytes int64) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = r.kv.mems[ri].Bytes[int64(i)*rowBytes : int64(i+1)*rowBytes : int64(i+1)*rowBytes]
	}
	return out
}

// remove deletes keys with DEL through the raw clients and checks that
// every one was there: a batch of keys a command on one server; on a
// cluster, whose DEL takes keys of one slot only, one key a command,
// pipelined a batch at a time to each key's node.
func (r *redisRig) remove(ks []string, stored int) error {
	const batch = 256
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	var deleted int64
	if !r.raw.cluster() {
		c := r.raw.clients[0]
		for lo := 0; lo < len(ks); lo += batch {
			n, err := c.Do(ctx, c.B().Del().Key(ks[lo:min(lo+batch, len(ks))]...).Build()).AsInt64()
			if err != nil {
				return fmt.Errorf("bench: deleting a round's keys: %w", err)
			}
			deleted += n
		}
	} else {
		byNode := make([][]string, len(r.raw.clients))
		for _, k := range ks {
			at := r.raw.of(k)
			byNode[at] = append(byNode[at], k)
		}
		for i, node := range byNode {
			n, err := deleteEach(ctx, r.raw.clients[i], node, batch)
			if err != nil {
				return fmt.Errorf("bench: deleting a round's keys on %s: %w", r.raw.addrs[i], err)
			}
			deleted += n
		}
	}
	if deleted != int64(stored) {
		return fmt.Errorf("bench: %d keys deleted after a round that stored %d", deleted, stored)
	}
	return nil
}

// deleteEach deletes keys on c, one DEL a key, batch commands a
// pipeline, and returns how many were there.
func deleteEach(ctx context.Context, c rueidis.Client, keys []string, batch int) (int64, error) {
	var deleted int64
	for lo := 0; lo < len(keys); lo += batch {
		cmds := make(rueidis.Commands, 0, batch)
		for _, k := range keys[lo:min(lo+batch, len(keys))] {
			cmds = append(cmds, c.B().Del().Key(k).Build())
		}
		for _, res := range c.DoMulti(ctx, cmds...) {
			n, err := res.AsInt64()
			if err != nil {
				return deleted, err
			}
			deleted += n
		}
	}
	return deleted, nil
}
