package doctor

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/redisdrv"
)

// redisProbe is one row's round trip through a backend over a driver
// opened as kvshare opens it (redisdrv.OpenConfig, the file's [blob]
// settings): a put of n random bytes from slot 0, a lookup that must
// answer Present, a get into slot 1 compared byte for byte, the key
// removed with DEL through the doctor's own client c, then the backend
// closed (the driver and its client with it) and the memory freed. It
// returns the lines of CheckPut, CheckLookup, CheckGet, CheckRemove and
// CheckClose, in that order. Each wait is bounded by opts.Wait.
func redisProbe(ctx context.Context, sc redisdrv.StoreConfig, c rueidis.Client, prefix string, opts Options) []Finding {
	p := &redisProber{sc: sc, raw: c, n: opts.ProbeBytes, wait: opts.Wait}
	var err error
	if p.key, err = probeKey(prefix); err != nil { // checkKeyPrefix passed, so this cannot happen
		return p.rest(fail(CheckPut, "%v", err))
	}
	if f, opened := p.open(ctx, prefix, opts); !opened {
		return p.rest(f)
	}
	put := p.put(ctx)
	lookup := p.lookup(ctx)
	get := p.get(ctx)
	remove := p.remove(ctx)
	return []Finding{put, lookup, get, remove, p.close(ctx)}
}

// redisProber is one probe's state.
type redisProber struct {
	sc      redisdrv.StoreConfig
	raw     rueidis.Client
	n       int
	wait    time.Duration
	key     string
	mem     *hostmem.Memory
	hold    *hostmem.Hold // the loan's hold on mem
	backend *binding.Backend
	stored  bool // the put came back Ready
}

// rest is the probe's lines when it could not start: first, then the
// others skipped.
func (p *redisProber) rest(first Finding) []Finding {
	why := "not run: the probe's backend did not open"
	return []Finding{first, skip(CheckLookup, "%s", why), skip(CheckGet, "%s", why), skip(CheckRemove, "%s", why),
		skip(CheckClose, "%s", "nothing to close")}
}

// open maps two slots of n bytes (one to put from, one to get into) and
// lends them to a backend over a new driver.
func (p *redisProber) open(ctx context.Context, prefix string, opts Options) (Finding, bool) {
	var err error
	if p.mem, err = hostmem.Map(hostmem.Geometry{SlotBytes: int64(p.n), SlotCount: 2}, hostmem.Options{}); err != nil {
		return fail(CheckPut, "mapping the probe's two slots: %v", err), false
	}
	if p.hold, err = p.mem.Hold(); err != nil {
		return fail(CheckPut, "holding the probe's slots: %v", err), false // refused only for memory already freed
	}
	octx, cancel := context.WithTimeout(ctx, p.wait)
	defer cancel()
	drv, err := redisdrv.OpenConfig(octx, p.sc, opts.Logger)
	if err != nil {
		p.hold.Release() // never lent
		return fail(CheckPut, "opening the driver: %v%s", err, p.free()), false
	}
	cfg := binding.FromBlob(p.sc.Blob)
	cfg.KeyPrefix, cfg.Logger = prefix, opts.Logger
	p.backend, err = binding.Open(octx, binding.Loan{Regions: p.mem.Regions(), Hold: p.hold}, drv, cfg)
	if err != nil {
		var live *binding.LiveRegistrationError
		if errors.As(err, &live) {
			p.hold.KeepForGood(err)
			return fail(CheckPut, "lending the probe's slots: %v (its memory is kept)", err), false
		}
		return fail(CheckPut, "lending the probe's slots: %v%s", err, p.free()), false
	}
	_, _ = rand.Read(p.mem.Slot(0, 0))
	poisonSlot(p.mem.Slot(0, 1))
	return Finding{}, true
}

// free frees the memory, saying so in a failure's detail when it cannot.
func (p *redisProber) free() string {
	if err := p.mem.Free(); err != nil {
		return "; freeing the probe's memory: " + err.Error()
	}
	return ""
}

// poisonSlot fills a slot the get is to write, so a get that wrote
// nothing cannot pass the comparison.
func poisonSlot(b []byte) {
	for i := range b {
		b[i] = poisonByte
	}
}

// poisonByte fills the get's slot before the get.
const poisonByte = 0xA5

// view is the probe's one row in slot.
func (p *redisProber) view(slot int32) contract.View {
	return contract.View{Groups: []contract.Group{{Slots: []int32{slot}, Names: [][]byte{[]byte(probeName)}}}}
}

// settle submits one view and waits, within the wait, for its outcome.
func (p *redisProber) settle(ctx context.Context, submit func(contract.View) (contract.Attempt, error), slot int32) (contract.Outcome, error) {
	a, err := submit(p.view(slot))
	if err != nil {
		return contract.Outcome{}, err
	}
	wctx, cancel := context.WithTimeout(ctx, p.wait)
	defer cancel()
	o, err := a.Wait(wctx)
	if err != nil {
		a.Cancel()
		return o, fmt.Errorf("no outcome within %v: %w", p.wait, err)
	}
	return o, nil
}

func (p *redisProber) put(ctx context.Context) Finding {
	start := time.Now()
	o, err := p.settle(ctx, func(v contract.View) (contract.Attempt, error) { return p.backend.Publish(v, nil) }, 0)
	if err != nil {
		return fail(CheckPut, "put of %s: %v", p.key, err)
	}
	if st := o.Rows[0]; st != contract.Ready {
		return fail(CheckPut, "put of %s (%s) ended %v%s%s", p.key, size(int64(p.n)), st, faultText(o.Fault), putHint(st))
	}
	p.stored = true
	return ok(CheckPut, "%s stored under %s (SET NX, then STRLEN confirming its length), Ready in %v", size(int64(p.n)), p.key, since(start))
}

// putHint explains a put's status.
func putHint(st contract.RowStatus) string {
	switch st {
	case contract.Declined:
		return ": the server answered OOM: it is at its maxmemory with the noeviction policy (or nothing left to evict)"
	case contract.NotReady:
		return ": a value stood under the key and vanished before STRLEN looked"
	}
	return ""
}

// faultText is an outcome's fault, when there is one.
func faultText(err error) string {
	if err == nil {
		return ""
	}
	return " (" + err.Error() + ")"
}

func (p *redisProber) lookup(ctx context.Context) Finding {
	if !p.stored {
		return skip(CheckLookup, "not run: the probe put failed")
	}
	lctx, cancel := context.WithTimeout(ctx, p.wait)
	defer cancel()
	start := time.Now()
	res, err := p.backend.Lookup(lctx, p.view(1), binding.LookupOptions{})
	if err != nil {
		return fail(CheckLookup, "lookup of %s: %v", p.key, err)
	}
	if got := res.Rows[0]; got != contract.Present {
		return fail(CheckLookup, "lookup of %s (EXISTS) answered %v, want Present: the row stored a moment ago is not there", p.key, got)
	}
	return ok(CheckLookup, "%s looked up Present (EXISTS) in %v", p.key, since(start))
}

func (p *redisProber) get(ctx context.Context) Finding {
	if !p.stored {
		return skip(CheckGet, "not run: the probe put failed")
	}
	start := time.Now()
	o, err := p.settle(ctx, func(v contract.View) (contract.Attempt, error) { return p.backend.Fetch(v, nil) }, 1)
	if err != nil {
		return fail(CheckGet, "get of %s: %v", p.key, err)
	}
	if st := o.Rows[0]; st != contract.Ready {
		return fail(CheckGet, "get of %s ended %v%s", p.key, st, faultText(o.Fault))
	}
	if !bytes.Equal(p.mem.Slot(0, 0), p.mem.Slot(0, 1)) {
		return fail(CheckGet, "get of %s was Ready, but its bytes differ from the bytes put", p.key)
	}
	return ok(CheckGet, "%s read back (GET, streamed into the slot) in %v, byte-identical", size(int64(p.n)), since(start))
}

// remove deletes the probe's key with DEL through the doctor's own
// client, whatever the put answered, and checks with EXISTS that it is
// gone.
func (p *redisProber) remove(ctx context.Context) Finding {
	rctx, cancel := context.WithTimeout(ctx, p.wait)
	defer cancel()
	start := time.Now()
	n, err := p.raw.Do(rctx, p.raw.B().Del().Key(p.key).Build()).AsInt64()
	if err != nil {
		return fail(CheckRemove, "DEL %s: %v", p.key, err)
	}
	left, err := p.raw.Do(rctx, p.raw.B().Exists().Key(p.key).Build()).AsInt64()
	switch {
	case err != nil:
		return fail(CheckRemove, "EXISTS %s after DEL: %v", p.key, err)
	case left != 0:
		return fail(CheckRemove, "%s deleted, yet EXISTS answers %d", p.key, left)
	case n == 0 && p.stored:
		return fail(CheckRemove, "DEL %s answered 0: the row stored a moment ago was gone already", p.key)
	case n == 0:
		return ok(CheckRemove, "DEL %s answered 0: nothing was stored", p.key)
	}
	return ok(CheckRemove, "%s deleted (DEL) in %v and gone (EXISTS 0)", p.key, since(start))
}

// close closes the backend (Shutdown, every attempt quiesced, the
// region unregistered, the hold released, then the driver and its
// client) and frees the memory; memory still held is kept.
func (p *redisProber) close(ctx context.Context) Finding {
	cctx, cancel := context.WithTimeout(ctx, p.wait)
	defer cancel()
	if err := p.backend.Close(cctx); err != nil {
		if errors.Is(err, binding.ErrHeldForGood) {
			p.hold.KeepForGood(err)
		}
		return fail(CheckClose, "closing the backend: %v (the probe's memory is kept)", err)
	}
	if err := p.mem.Free(); err != nil {
		return fail(CheckClose, "backend closed, but freeing the probe's memory: %v", err)
	}
	return ok(CheckClose, "backend closed (its driver and the driver's client with it), the probe's memory freed")
}
