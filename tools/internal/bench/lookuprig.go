package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
	"github.com/kvshare/kvshare/tools/internal/poolfloor"
	"github.com/kvshare/kvshare/tools/internal/runprefix"
)

// memdrvLookupStage is measurement 6 over memdrv: a backend over a
// memdrv driver, one slot lent (a lookup lends none), and for the floor
// the same driver's own Lookup, called directly.
func memdrvLookupStage(o Options) (*lookupStage, error) {
	store := memdrv.NewStore()
	drv := memdrv.New(store, memdrv.Options{Workers: 1, Logger: slog.New(slog.DiscardHandler)})
	st, stem, err := inProcessLookupStage(o, lookupMemdrv, lookupPrefix, observed(o, Lookup), drv, func(key string, data []byte) error {
		store.Set(key, data)
		return nil
	})
	if err != nil {
		return nil, err
	}
	st.floor = func(ctx context.Context, calls [][][]byte, _ bool) (*lookupFloor, error) {
		return looksUp(ctx, drv, stem, calls), nil
	}
	return st, nil
}

// inProcessLookupStage is what the stages over an in-process store
// share: a backend over drv with one slot lent (a lookup lends none)
// and keys under prefix, told to obs, and a put that stores one object
// of the measurement's size under each name's key through set. The
// caller adds the floor.
func inProcessLookupStage(o Options, name, prefix string, obs observation, drv contract.Driver, set func(key string, data []byte) error) (*lookupStage, keys.Stem, error) {
	stem, err := keys.NewStem(prefix)
	if err != nil {
		return nil, stem, errors.Join(err, closeIdle(drv))
	}
	kv, err := newLender(drv, o.Lookup.ObjectBytes, 1, binding.Config{KeyPrefix: prefix}, obs)
	if err != nil {
		return nil, stem, err
	}
	data := make([]byte, o.Lookup.ObjectBytes)
	fill(data, 0x6c)
	return &lookupStage{
		store: name,
		kv:    kv,
		put: func(names [][]byte) error {
			for _, n := range names {
				k, err := stem.Key(n)
				if err != nil {
					return err
				}
				if err := set(k, data); err != nil {
					return err
				}
			}
			return nil
		},
		close: kv.close,
	}, stem, nil
}

// looksUp is memdrv's floor: the driver's Lookup called directly, one
// call a batch of the plan, each into a dst it reuses.
func looksUp(ctx context.Context, l contract.Looker, stem keys.Stem, calls [][][]byte) *lookupFloor {
	batches := make([]contract.LookupBatch, len(calls))
	dsts := make([][]contract.Presence, len(calls))
	for i, names := range calls {
		batches[i] = contract.LookupBatch{Keys: stem, Names: names}
		dsts[i] = make([]contract.Presence, 0, len(names))
	}
	return &lookupFloor{
		run: func() error {
			for i := range batches {
				var err error
				if dsts[i], err = l.Lookup(ctx, batches[i], dsts[i]); err != nil {
					return err
				}
			}
			return nil
		},
		answers: func() []contract.Presence {
			var out []contract.Presence
			for _, d := range dsts {
				out = append(out, d...)
			}
			return out
		},
		sizeCalls: func() int { return 0 },
	}
}

// fakeLookupStage is measurement 6 over the Mooncake driver on the fake
// SDK (no latency): a backend over the driver, and for the floor the
// same client's calls made directly.
func fakeLookupStage(o Options) (*lookupStage, error) {
	store := fakesdk.New(fakesdk.Options{})
	client := store.Client()
	drv, err := mooncakedrv.New(client, mooncakedrv.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	st, stem, err := inProcessLookupStage(o, lookupFake, lookupPrefix, observed(o, Lookup), drv, func(key string, data []byte) error {
		_, err := store.Seed(key, data)
		return err
	})
	if err != nil {
		return nil, err
	}
	st.blocks = true
	st.floor = func(_ context.Context, calls [][][]byte, handOff bool) (*lookupFloor, error) {
		return existsChecks(client, stem, calls, handOff)
	}
	return st, nil
}

// lookupSlots is the slots a real pool's lender lends, from which the
// objects are put, lookupSlots keys a call.
const lookupSlots = 256

// realPoolLookupStage is measurement 6 over a real pool (target, which
// its close stops): a backend over a Mooncake driver that owns the
// client, and for the floor the same client's calls made directly. The
// objects go under a prefix of the run's own (returned), put straight
// with the client from the lent slots, and are removed at the end.
func realPoolLookupStage(o Options, target *poolTarget) (*lookupStage, string, error) {
	prefix, err := runprefix.New(target.config.Blob.KeyPrefix, "bench")
	if err != nil {
		return nil, "", errors.Join(err, target.client.Destroy(), target.close())
	}
	stem, err := keys.NewStem(prefix)
	if err != nil {
		return nil, prefix, errors.Join(err, target.client.Destroy(), target.close())
	}
	cfg := mooncakedrv.ConfigFrom(target.config.Mooncake)
	cfg.Logger = slog.New(slog.DiscardHandler)
	drv, err := mooncakedrv.New(target.client, cfg)
	if err != nil {
		return nil, prefix, errors.Join(err, target.client.Destroy(), target.close())
	}
	rowBytes := o.Lookup.ObjectBytes
	kv, err := newLender(drv, rowBytes, lookupSlots, binding.Config{KeyPrefix: prefix}, observed(o, Lookup))
	if err != nil {
		return nil, prefix, errors.Join(err, target.close())
	}
	client := target.client
	workers := max(cfg.Workers, 1)
	return &lookupStage{
		store:  lookupRealPool,
		blocks: true,
		kv:     kv,
		put: func(names [][]byte) error {
			base := kv.mems[0].Region.Base
			for lo := 0; lo < len(names); lo += lookupSlots {
				hi := min(lo+lookupSlots, len(names))
				var l mooncakesdk.KeyList
				bufs, sizes, codes := make([]uintptr, 0, hi-lo), make([]uint64, 0, hi-lo), make([]int64, hi-lo)
				for i := lo; i < hi; i++ {
					if err := l.Add(stem.AppendKey(l.Tail(), names[i])); err != nil {
						return err
					}
					bufs = append(bufs, base+uintptr(int64(i-lo)*rowBytes))
					sizes = append(sizes, uint64(rowBytes))
				}
				if err := client.BatchPutFromList(&l, bufs, sizes, codes); err != nil {
					return err
				}
				for i, c := range codes {
					if c != 0 {
						return fmt.Errorf("the put of %s answered %d", l.Key(i), c)
					}
				}
			}
			return nil
		},
		remove: func(names [][]byte) error { return poolfloor.Remove(client, stem, names, workers) },
		floor: func(_ context.Context, calls [][][]byte, handOff bool) (*lookupFloor, error) {
			return existsChecks(client, stem, calls, handOff)
		},
		close: func() error { return errors.Join(kv.close(), target.close()) },
	}, prefix, nil
}

// existsCheck is one call of the Mooncake floor: its names, its keys
// packed (built again on every run), its answers, and the first key
// answering 0 with what get_size said of it.
type existsCheck struct {
	names [][]byte
	keys  mooncakesdk.KeyList
	exist []int32
	first int
	size  mooncakesdk.Code
}

// existsChecks is the Mooncake floor: what the driver does for a batch,
// done directly: build the batch's keys, one batch_is_exist for them,
// then, when the client implements mooncakesdk.Sizer, one get_size for
// the first key answering 0. With handOff every call is made on a
// goroutine of its own that the caller waits for, as a driver does that
// may abandon its call when the caller's context ends.
func existsChecks(client mooncakesdk.Client, stem keys.Stem, calls [][][]byte, handOff bool) (*lookupFloor, error) {
	sizer, _ := client.(mooncakesdk.Sizer)
	cs := make([]*existsCheck, len(calls))
	for i, names := range calls {
		cs[i] = &existsCheck{names: names, exist: make([]int32, len(names)), first: -1}
	}
	check := func(c *existsCheck) error {
		c.keys.Reset()
		for _, n := range c.names {
			if err := c.keys.Add(stem.AppendKey(c.keys.Tail(), n)); err != nil {
				return err
			}
		}
		if err := client.BatchIsExistList(&c.keys, c.exist); err != nil {
			return err
		}
		c.first = -1
		if sizer == nil {
			return nil
		}
		for j, e := range c.exist {
			if e != 0 {
				continue
			}
			c.first = j
			n, err := sizer.GetSize(string(c.keys.Key(j)))
			var ce *mooncakesdk.CallError
			switch {
			case errors.As(err, &ce):
				c.size = ce.Code
			case err == nil:
				c.size = mooncakesdk.Code(n)
			default:
				return err
			}
			break
		}
		return nil
	}
	run := func() error {
		for _, c := range cs {
			if err := check(c); err != nil {
				return err
			}
		}
		return nil
	}
	if handOff {
		run = func() error {
			for _, c := range cs {
				done := make(chan error, 1)
				go func() { done <- check(c) }()
				if err := <-done; err != nil {
					return err
				}
			}
			return nil
		}
	}
	return &lookupFloor{
		run: run,
		answers: func() []contract.Presence {
			var out []contract.Presence
			for _, c := range cs {
				for j, e := range c.exist {
					switch {
					case e == 1:
						out = append(out, contract.Present)
					case e == 0 && j == c.first && c.size == mooncakesdk.ReplicaIsNotReady:
						out = append(out, contract.InFlight)
					case e == 0 && j == c.first && c.size > 0:
						out = append(out, contract.Present)
					case e == 0:
						out = append(out, contract.Absent)
					default:
						out = append(out, contract.Unknown)
					}
				}
			}
			return out
		},
		sizeCalls: func() int {
			n := 0
			for _, c := range cs {
				if c.first >= 0 {
					n++
				}
			}
			return n
		},
	}, nil
}
