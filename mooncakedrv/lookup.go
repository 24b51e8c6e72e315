package mooncakedrv

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// MaxLookupsInStore bounds the lookup calls inside the SDK at once,
// those a lookup abandoned at its deadline included: a lookup that finds
// the bound reached answers Unknown for every name at once, making no
// call, rather than pile up threads behind a store that does not answer.
const MaxLookupsInStore = 8

// probe is one lookup's SDK work: its own copy of the keys (an abandoned
// probe still reads them) and answers. Probes are pooled.
type probe struct {
	keys   mooncakesdk.KeyList
	exist  []int32
	hashes []uint64
	seen   map[uint64]int // key hash → first name, for the repeat check
	// first is the index of the first name answering 0, asked again with
	// get_size (-1: none); size its answer.
	first int
	size  mooncakesdk.Code
	err   error
	panic any
	done  chan struct{}
	// finished (the SDK calls returned) and abandoned (Lookup answered
	// without them) are guarded by the driver's lock: whichever comes
	// second hands the probe back to the pool.
	finished, abandoned bool
}

var probes = sync.Pool{New: func() any { return &probe{seen: map[uint64]int{}} }}

// Lookup is [contract.Looker] over Mooncake: one batch_is_exist for the
// batch's keys (1 Present, 0 Absent, a negative code Unknown), a key a
// put of this driver is writing InFlight without asking the store, and
// the first key answering 0 asked once more with get_size, which tells a
// put in flight (REPLICA_IS_NOT_READY: InFlight) from an absent key
// (OBJECT_NOT_FOUND: Absent): that row is the one a lookup's bound stops
// at, the one an engine acts on. Later keys answering 0 are Absent (a put
// of another client in flight among them reads Absent: the driver does
// not declare LookupInFlight). An exists-check and a get_size grant the
// objects found a read lease (the master's default_kv_lease_ttl).
//
// Both answer from the master's metadata, which keeps listing a
// provider's objects until the provider's client_ttl runs out: a
// provider frozen, killed or cut off leaves its objects Present for
// that long while a get of them faults (-800), and a stopped process's
// kernel still accepts connections, with no ping in the C ABI to tell.
// So the driver declares PresenceFromIndex: Present means the master
// lists a complete object, and a get may still fault. On a loopback
// pool with the default client_ttl of 10 s, lookups answered Present
// for about 10.3 s after the only provider froze; with replicas 2 and
// one of three providers killed they kept answering Present (each
// object keeps a copy) while the gets of the objects whose first copy
// lived there faulted for about 10 s (docs/design.md, "Mooncake").
//
// The SDK calls run on a goroutine of the driver; when ctx ends first,
// Lookup answers Unknown for every name it had not answered and abandons
// the call, which owns only its own copy of the keys and its answer
// buffers (no lent memory: a lookup lends none), and ends when the store
// answers. While any lookup is inside the store Drain answers false and
// Close is refused. Refusals, with an error wrapping
// [contract.ErrDriverRejected] and no call: after Drain, a batch without
// a key maker, an empty name, a name without a key or with a NUL in its
// key, a name twice.
func (d *Driver) Lookup(ctx context.Context, b contract.LookupBatch, dst []contract.Presence) ([]contract.Presence, error) {
	dst = dst[:0]
	d.mu.Lock()
	err := d.usableLocked("lookup")
	d.mu.Unlock()
	if err != nil {
		return dst, err
	}
	p := probes.Get().(*probe)
	if err := d.buildProbe(p, b); err != nil {
		probes.Put(p)
		return dst, fmt.Errorf("%w: mooncakedrv: lookup: %w", contract.ErrDriverRejected, err)
	}
	n := len(b.Names)
	for range n {
		dst = append(dst, contract.Unknown)
	}

	d.mu.Lock()
	if err := d.usableLocked("lookup"); err != nil {
		d.mu.Unlock()
		probes.Put(p)
		return dst[:0], err
	}
	ask := false
	for i := range n {
		if _, busy := d.writing[p.hashes[i]]; busy {
			dst[i] = contract.InFlight
		} else {
			ask = true
		}
	}
	d.stats.Lookups++
	d.stats.LookupNames += int64(n)
	if !ask {
		d.mu.Unlock()
		probes.Put(p)
		return dst, nil
	}
	if d.lookupsInStore >= MaxLookupsInStore {
		d.stats.LookupsRefused++
		d.mu.Unlock()
		probes.Put(p)
		return dst, nil // Unknown for what the store was not asked
	}
	d.lookupsInStore++
	d.mu.Unlock()

	go d.runProbe(p)
	select {
	case <-p.done:
	case <-ctx.Done():
		d.mu.Lock()
		if !p.finished {
			p.abandoned = true
			d.stats.LookupsAbandoned++
			d.mu.Unlock()
			return dst, nil // the probe ends on its own and hands itself back
		}
		d.mu.Unlock()
		<-p.done
	}
	d.answer(p, dst)
	probes.Put(p)
	return dst, nil
}

// buildProbe copies the batch's keys into p and checks them.
func (d *Driver) buildProbe(p *probe, b contract.LookupBatch) error {
	if b.Keys == nil {
		return errors.New("no key maker")
	}
	n := len(b.Names)
	p.keys.Reset()
	p.exist = resize(p.exist, n)
	p.hashes = resize(p.hashes, n)
	clear(p.seen)
	p.first, p.size, p.err, p.panic = -1, 0, nil, nil
	p.finished, p.abandoned = false, false
	p.done = make(chan struct{})
	for i, name := range b.Names {
		if len(name) == 0 {
			return fmt.Errorf("name %d is empty", i)
		}
		if b.Keys.KeyLen(len(name)) == 0 {
			return fmt.Errorf("name %d (%d bytes) has no key", i, len(name))
		}
		if err := p.keys.Add(b.AppendKey(p.keys.Tail(), i)); err != nil {
			return fmt.Errorf("name %d: %w", i, err)
		}
		h := maphash.Bytes(d.seed, p.keys.Key(i))
		if j, dup := p.seen[h]; dup && string(p.keys.Key(j)) == string(p.keys.Key(i)) {
			return fmt.Errorf("names %d and %d make one key", j, i)
		}
		p.seen[h] = i
		p.hashes[i] = h
	}
	return nil
}

// runProbe makes the probe's SDK calls, then counts it out of the store
// and signals its end. An abandoned probe goes back to the pool here:
// nothing else holds it any more.
func (d *Driver) runProbe(p *probe) {
	panicked, err := sdkCall(func() error { return d.client.BatchIsExistList(&p.keys, p.exist) })
	if panicked == nil && err == nil {
		for i, e := range p.exist {
			if e == 0 {
				p.first = i
				break
			}
		}
		if sizer, ok := d.client.(mooncakesdk.Sizer); ok && p.first >= 0 {
			key := string(p.keys.Key(p.first))
			panicked, err = sdkCall(func() error {
				n, err := sizer.GetSize(key)
				var ce *mooncakesdk.CallError
				switch {
				case errors.As(err, &ce):
					p.size = ce.Code
				case err == nil:
					p.size = mooncakesdk.Code(n)
				default:
					return err
				}
				return nil
			})
		}
	}
	p.panic, p.err = panicked, err
	d.mu.Lock()
	d.stats.Calls++
	if panicked != nil {
		d.stats.Panics++
	}
	d.lookupsInStore--
	if d.lookupsInStore == 0 {
		close(d.lookupsIdle)
		d.lookupsIdle = make(chan struct{})
	}
	p.finished = true
	abandoned := p.abandoned
	d.mu.Unlock()
	close(p.done)
	if abandoned {
		probes.Put(p)
	}
}

// answer writes the probe's verdicts into dst, the rows answered without
// the store (InFlight) aside.
func (d *Driver) answer(p *probe, dst []contract.Presence) {
	if p.panic != nil || p.err != nil {
		if p.panic != nil {
			d.log.Error("mooncakedrv: lookup: the SDK panicked; the names are Unknown", "panic", p.panic)
		}
		return
	}
	for i, e := range p.exist {
		if dst[i] == contract.InFlight {
			continue
		}
		switch {
		case e == 1:
			dst[i] = contract.Present
		case e == 0 && i == p.first:
			dst[i] = sizePresence(p.size)
		case e == 0:
			dst[i] = contract.Absent
		}
	}
}

// sizePresence is what get_size's answer says of a key batch_is_exist
// answered 0 for.
func sizePresence(c mooncakesdk.Code) contract.Presence {
	switch {
	case c == mooncakesdk.ReplicaIsNotReady:
		return contract.InFlight
	case c == mooncakesdk.ObjectNotFound, c == 0:
		return contract.Absent
	case c > 0:
		return contract.Present // complete by now: a get would read it whole
	}
	return contract.Absent // no get_size (no Sizer), or another code: batch_is_exist's 0 stands
}

var _ contract.Looker = (*Driver)(nil)
