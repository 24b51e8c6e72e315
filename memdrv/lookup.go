package memdrv

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync"

	"github.com/kvshare/kvshare/contract"
)

// Lookup is [contract.Looker] over the in-memory store, exact: a
// complete object is Present, a key being written (another writer's, or
// a put of this driver, from its admission on, whether a worker took the
// row yet or not) InFlight, any other Absent. It refuses, with an
// error wrapping [contract.ErrDriverRejected] and no look at the store,
// after Drain, a batch without a key maker, an empty name, a name
// without a key and a name twice. Its scenario hooks: [Driver.HoldLookups]
// holds lookups inside the store (answered Unknown once their context
// ends; the abandoned lookup stays inside until the gate opens, and Drain
// answers false meanwhile), [Driver.FailLookups] makes the store fail to
// answer for some keys (Unknown). An abandoned lookup owns nothing but
// its own copy of the keys.
func (d *Driver) Lookup(ctx context.Context, b contract.LookupBatch, dst []contract.Presence) ([]contract.Presence, error) {
	dst = dst[:0]
	p := probes.Get().(*probe)
	defer probes.Put(p)
	if err := p.build(b); err != nil {
		return dst, err
	}
	d.mu.Lock()
	if err := d.usableLocked("lookup"); err != nil {
		d.mu.Unlock()
		return dst, err
	}
	d.probes.asked += int64(len(b.Names))
	gate := d.probes.gate
	if gate == nil { // the common case: answered here, at once
		dst = d.presentLocked(p, dst)
		d.mu.Unlock()
		return dst, nil
	}
	d.probes.inside++
	d.mu.Unlock()

	// Held: the probe waits inside the store on a goroutine of its own,
	// with a copy of the keys (an abandoned one outlives this call).
	held := &probe{buf: append([]byte(nil), p.buf...), ends: append([]int(nil), p.ends...)}
	done := make(chan []contract.Presence, 1)
	go func() {
		gate.arrive()
		<-gate.open
		d.mu.Lock()
		done <- d.presentLocked(held, nil)
		d.probes.inside--
		d.wakeLocked()
		d.mu.Unlock()
	}()
	select {
	case got := <-done:
		return append(dst, got...), nil
	case <-ctx.Done():
		d.mu.Lock()
		d.probes.abandoned++
		d.mu.Unlock()
		for range b.Names {
			dst = append(dst, contract.Unknown)
		}
		return dst, nil
	}
}

// presentLocked appends the answer for each of p's keys, from the store
// and the driver's own writes.
func (d *Driver) presentLocked(p *probe, dst []contract.Presence) []contract.Presence {
	d.store.mu.Lock() // once for the batch (the store never takes a driver's lock)
	defer d.store.mu.Unlock()
	start := 0
	for _, end := range p.ends {
		k := p.buf[start:end]
		start = end
		_, failed := d.probes.failing[string(k)]
		_, writing := d.writing[string(k)]
		if !writing {
			_, writing = d.queuedPuts[string(k)] // admitted is putting, taken or not
		}
		switch {
		case failed:
			dst = append(dst, contract.Unknown)
		case writing:
			dst = append(dst, contract.InFlight)
		default:
			switch d.store.presenceLocked(k) {
			case contract.Ready:
				dst = append(dst, contract.Present)
			case contract.NotReady:
				dst = append(dst, contract.InFlight)
			default:
				dst = append(dst, contract.Absent)
			}
		}
	}
	return dst
}

// probe is one lookup's keys, packed in one buffer; pooled.
type probe struct {
	buf  []byte
	ends []int          // key i is buf[ends[i-1]:ends[i]]
	seen map[uint64]int // key hash → first name, for the repeat check
	seed maphash.Seed
}

var probes = sync.Pool{New: func() any { return &probe{seen: map[uint64]int{}, seed: maphash.MakeSeed()} }}

// build packs the batch's keys, refusing what Lookup refuses.
func (p *probe) build(b contract.LookupBatch) error {
	if b.Keys == nil {
		return fmt.Errorf("%w: memdrv: lookup: no key maker", contract.ErrDriverRejected)
	}
	p.buf, p.ends = p.buf[:0], p.ends[:0]
	clear(p.seen)
	for i, name := range b.Names {
		if len(name) == 0 || b.Keys.KeyLen(len(name)) == 0 {
			return fmt.Errorf("%w: memdrv: lookup: name %d has no key", contract.ErrDriverRejected, i)
		}
		start := len(p.buf)
		p.buf = b.AppendKey(p.buf, i)
		k := p.buf[start:]
		h := maphash.Bytes(p.seed, k)
		if j, dup := p.seen[h]; dup && string(p.key(j)) == string(k) {
			return fmt.Errorf("%w: memdrv: lookup: names %d and %d make one key", contract.ErrDriverRejected, j, i)
		}
		p.seen[h] = i
		p.ends = append(p.ends, len(p.buf))
	}
	return nil
}

// key is key i of the probe.
func (p *probe) key(i int) []byte {
	start := 0
	if i > 0 {
		start = p.ends[i-1]
	}
	return p.buf[start:p.ends[i]]
}

// probeScene is the lookups' scenario state, guarded by the driver's
// lock.
type probeScene struct {
	gate      *LookupGate
	failing   map[string]struct{}
	inside    int   // lookups inside the store now (abandoned ones too)
	asked     int64 // names asked
	abandoned int64
}

// LookupGate holds lookups inside the store (see [Driver.HoldLookups]).
type LookupGate struct {
	d       *Driver
	arrived chan struct{} // closed when a lookup first blocks
	open    chan struct{} // closed by Release
}

func (g *LookupGate) arrive() {
	g.d.mu.Lock()
	defer g.d.mu.Unlock()
	select {
	case <-g.arrived:
	default:
		close(g.arrived)
	}
}

// Held waits within ctx until a lookup is held at the gate.
func (g *LookupGate) Held(ctx context.Context) error {
	select {
	case <-g.arrived:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("memdrv: no lookup reached the gate: %w", ctx.Err())
	}
}

// Release lets every held lookup answer and stops holding; idempotent.
func (g *LookupGate) Release() {
	g.d.mu.Lock()
	defer g.d.mu.Unlock()
	if g.d.probes.gate == g {
		g.d.probes.gate = nil
	}
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

// HoldLookups makes every later lookup block inside the store until the
// gate is released: its context's end answers Unknown for its names, and
// it stays inside the store (Drain answers false) until Release.
func (d *Driver) HoldLookups() *LookupGate {
	g := &LookupGate{d: d, arrived: make(chan struct{}), open: make(chan struct{})}
	d.mu.Lock()
	d.probes.gate = g
	d.mu.Unlock()
	return g
}

// FailLookups makes the store fail to answer lookups of these keys:
// they read Unknown.
func (d *Driver) FailLookups(keys ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.probes.failing == nil {
		d.probes.failing = map[string]struct{}{}
	}
	for _, k := range keys {
		d.probes.failing[k] = struct{}{}
	}
}

// Lookups returns the lookups inside the store now, the names asked and
// the lookups abandoned at their deadline.
func (d *Driver) Lookups() (inside int, asked, abandoned int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.probes.inside, d.probes.asked, d.probes.abandoned
}

var _ contract.Looker = (*Driver)(nil)
