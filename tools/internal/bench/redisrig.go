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
// driver with a client of its own), and a raw client built from the same
// client option for the floor, the plain loop and the deletes; one
// region of slots per row size, lent to kvshare and used by the floor
// and the plain loop too (never at the same time). Each side stores
// under a prefix of its own.
type redisRig struct {
	o      Options
	target *redisTarget
	kv     *lender
	raw    rueidis.Client
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

// newRedisRig builds the stage over target: the raw client, the driver
// (owning a client of its own), one region per row size lent to a
// backend. On error everything built is given back, the target too.
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
	opt, err := sc.ClientOption()
	if err != nil {
		return nil, errors.Join(err, target.close())
	}
	if r.raw, err = rueidis.NewClient(opt); err != nil {
		return nil, errors.Join(fmt.Errorf("bench: connecting to %s: %w", sc.Redis.Address, err), target.close())
	}
	r.floor = &redisFloor{client: r.raw, workers: r.drv.Workers, callTimeout: r.drv.CallTimeout}
	r.plain = &redisPlain{client: r.raw, workers: r.drv.Workers, bound: r.floor.timeout}
	drv, err := redisdrv.OpenConfig(ctx, sc, slog.New(slog.DiscardHandler))
	if err != nil {
		r.raw.Close()
		return nil, errors.Join(err, target.close())
	}
	var mems []*memdrv.Memory
	for _, rs := range o.Redis.RowSizes {
		m, err := memdrv.Alloc(rs, o.Redis.rows(rs), contract.Host)
		if err != nil {
			for _, m := range mems {
				err = errors.Join(err, m.Free())
			}
			r.raw.Close()
			return nil, errors.Join(err, closeIdle(drv), target.close())
		}
		fill(m.Bytes, byte(len(mems)+1))
		mems = append(mems, m)
	}
	cfg := binding.FromBlob(sc.Blob)
	cfg.KeyPrefix = r.stems[sideKvshare].Prefix()
	r.kv, err = lendMemory(drv, cfg, observed(o, Redis), mems...)
	if err != nil {
		if !errors.Is(err, errMemoryKept) {
			for _, m := range mems {
				err = errors.Join(err, m.Free())
			}
		}
		r.raw.Close()
		return nil, errors.Join(err, target.close())
	}
	return r, nil
}

// close gives kvshare's lender back (closing the driver closes its
// client), closes the raw client and stops a server started for the run.
func (r *redisRig) close() error {
	err := r.kv.close()
	r.raw.Close()
	return errors.Join(err, r.target.close())
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

// remove deletes keys with DEL through the raw client, a batch of keys a
// command, and checks that every one was there.
func (r *redisRig) remove(ks []string, stored int) error {
	const batch = 256
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	var deleted int64
	for lo := 0; lo < len(ks); lo += batch {
		n, err := r.raw.Do(ctx, r.raw.B().Del().Key(ks[lo:min(lo+batch, len(ks))]...).Build()).AsInt64()
		if err != nil {
			return fmt.Errorf("bench: deleting a round's keys: %w", err)
		}
		deleted += n
	}
	if deleted != int64(stored) {
		return fmt.Errorf("bench: %d keys deleted after a round that stored %d", deleted, stored)
	}
	return nil
}
