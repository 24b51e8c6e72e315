package drivekit

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync"
	"unsafe"

	"github.com/kvshare/kvshare/contract"
)

// Lookup is [contract.Looker]'s over the store's [Looker]. It refuses,
// with an error wrapping [contract.ErrDriverRejected] and no call to the
// store, a store that cannot look, a batch without a key maker, an
// empty name, a name without a key, a name twice (unless the batch is
// Distinct: the caller checked), and every batch after Drain or Close
// and while Recycle runs. Otherwise the store answers
// (see [Looker]) and the kit answers InFlight for every key a put of
// this driver is writing, from its admission until its row is final,
// unless the store failed to answer it (Unknown). A store whose lookup
// may block is asked on a goroutine of the kit's, which owns the kit's
// copy of the keys: when ctx ends first, the names read Unknown and the
// call is abandoned; it stays inside the store (Drain answers false,
// Close is refused) until the store answers, and owns nothing but its
// copy. A ctx that cannot end (no Done channel, as
// context.Background) gives nothing to abandon for: the store is asked
// on the caller's goroutine.
func (d *Driver) Lookup(ctx context.Context, b contract.LookupBatch, dst []contract.Presence) ([]contract.Presence, error) {
	dst = dst[:0]
	if d.looker == nil {
		return dst, d.refusal("lookup", "the store cannot look")
	}
	q := queries.Get().(*query)
	if err := q.build(d, b); err != nil {
		queries.Put(q)
		return dst, err
	}
	d.mu.Lock()
	if err := d.usableLocked("lookup"); err != nil {
		d.mu.Unlock()
		queries.Put(q)
		return dst, err
	}
	d.stats.Lookups++
	d.stats.LookupNames += int64(len(b.Names))
	if d.allOwnWritesLocked(q.keys) { // nothing to ask the store
		d.mu.Unlock()
		queries.Put(q)
		for range b.Names {
			dst = append(dst, contract.InFlight)
		}
		return dst, nil
	}
	if d.lookCap > 0 && d.lookups.inside >= d.lookCap {
		d.stats.LookupsRefused++
		d.mu.Unlock()
		queries.Put(q)
		for range b.Names {
			dst = append(dst, contract.Unknown)
		}
		return dst, nil
	}
	d.lookups.inside++
	d.mu.Unlock()

	// Asked here when the store answers at once, or when nothing can end
	// the wait (ctx has no Done channel): then there is nothing to
	// abandon the call for, and it needs no goroutine of its own.
	if !d.looker.LookBlocks() || ctx.Done() == nil {
		dst = d.looker.Look(ctx, q.keys, dst)
		d.mu.Lock()
		d.ownWritesLocked(q.keys, dst)
		d.leaveLocked()
		d.mu.Unlock()
		queries.Put(q)
		return dst, nil
	}
	// The store may block: the call waits inside it on a goroutine of
	// its own, which owns q from now on (an abandoned call outlives this
	// one): whichever of the two is done with q last gives it back.
	q.done = make(chan struct{}, 1) // per call: a pooled channel could cross synctest bubbles
	go d.lookAside(ctx, q)
	select {
	case <-q.done:
		dst = append(dst, q.got...)
		queries.Put(q)
		return dst, nil
	case <-ctx.Done():
	}
	d.mu.Lock()
	if q.finished { // answered meanwhile: its answer is on the way
		d.mu.Unlock()
		<-q.done
		dst = append(dst, q.got...)
		queries.Put(q)
		return dst, nil
	}
	q.abandoned = true
	d.stats.LookupsAbandoned++
	d.mu.Unlock()
	for range b.Names {
		dst = append(dst, contract.Unknown)
	}
	return dst, nil
}

// lookAside asks the store on a goroutine of the kit's and hands the
// answer to the lookup waiting for it, or gives q back if it was
// abandoned.
func (d *Driver) lookAside(ctx context.Context, q *query) {
	q.got = d.looker.Look(context.WithoutCancel(ctx), q.keys, q.got[:0])
	d.mu.Lock()
	d.ownWritesLocked(q.keys, q.got)
	d.leaveLocked()
	q.finished = true
	abandoned := q.abandoned
	d.mu.Unlock()
	if abandoned {
		queries.Put(q)
		return
	}
	q.done <- struct{}{}
}

// ownWritesLocked answers InFlight for every key a put of this driver
// writes or has admitted, unless the store did not answer it. Read
// after the store's answer, so a key this driver puts is never Present
// before its put is Ready.
func (d *Driver) ownWritesLocked(keys [][]byte, got []contract.Presence) {
	if d.puts.empty() {
		return
	}
	for i, k := range keys {
		if i >= len(got) || got[i] == contract.Unknown {
			continue
		}
		if d.puts.has(unsafe.String(unsafe.SliceData(k), len(k))) {
			got[i] = contract.InFlight
		}
	}
}

// allOwnWritesLocked reports whether a put of this driver writes, or
// has admitted, every one of keys.
func (d *Driver) allOwnWritesLocked(keys [][]byte) bool {
	if d.puts.empty() {
		return false
	}
	for _, k := range keys {
		if !d.puts.has(unsafe.String(unsafe.SliceData(k), len(k))) {
			return false
		}
	}
	return true
}

// leaveLocked counts a lookup out of the store.
func (d *Driver) leaveLocked() {
	d.lookups.inside--
	d.wakeLocked()
}

// lookups is the lookup budget's state, guarded by the driver's lock.
type lookups struct {
	inside int // lookups inside the store now (abandoned ones too)
}

// Lookups returns the lookups inside the store now, the names asked and
// the lookups abandoned at their deadline.
func (d *Driver) Lookups() (inside int, asked, abandoned int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lookups.inside, d.stats.LookupNames, d.stats.LookupsAbandoned
}

// query is one lookup's keys, packed in one buffer; pooled.
type query struct {
	buf  []byte
	ends []int          // key i is buf[ends[i-1]:ends[i]]
	keys [][]byte       // over buf
	seen map[uint64]int // key hash → first name, for the repeat check
	seed maphash.Seed
	// For a lookup asked aside (see lookAside): its answer, a signal
	// that it is there, and, under the driver's lock, whether the store
	// answered and whether the lookup stopped waiting.
	got                 []contract.Presence
	done                chan struct{}
	finished, abandoned bool
}

var queries = sync.Pool{New: func() any {
	return &query{seen: map[uint64]int{}, seed: maphash.MakeSeed()}
}}

// build packs the batch's keys, refusing what Lookup refuses.
func (q *query) build(d *Driver, b contract.LookupBatch) error {
	if b.Keys == nil {
		return d.refusal("lookup", "no key maker")
	}
	q.buf, q.ends, q.keys = q.buf[:0], q.ends[:0], q.keys[:0]
	q.finished, q.abandoned = false, false
	clear(q.seen)
	for i, name := range b.Names {
		if len(name) == 0 || b.Keys.KeyLen(len(name)) == 0 {
			return d.refusal("lookup", "name %d has no key", i)
		}
		start := len(q.buf)
		q.buf = b.AppendKey(q.buf, i)
		k := q.buf[start:]
		if d.keyChk != nil {
			if err := d.keyChk.CheckKey(unsafe.String(unsafe.SliceData(k), len(k))); err != nil {
				return fmt.Errorf("%w: %s: lookup: name %d: %w", contract.ErrDriverRejected, d.name, i, err)
			}
		}
		if !b.Distinct { // the caller did not check: the kit does
			h := maphash.Bytes(q.seed, k)
			if j, dup := q.seen[h]; dup && string(q.key(j)) == string(k) {
				return d.refusal("lookup", "names %d and %d make one key", j, i)
			}
			q.seen[h] = i
		}
		q.ends = append(q.ends, len(q.buf))
	}
	start := 0
	for _, end := range q.ends {
		q.keys = append(q.keys, q.buf[start:end:end])
		start = end
	}
	return nil
}

// key is key i of the keys packed so far.
func (q *query) key(i int) []byte {
	start := 0
	if i > 0 {
		start = q.ends[i-1]
	}
	return q.buf[start:q.ends[i]]
}
