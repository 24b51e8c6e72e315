package mooncakedrv

import (
	"sync/atomic"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// part is one SDK call's worth of an operation: rows [lo, hi) of its
// batch, at most RowsPerCall rows and BytesPerCall bytes (a single
// larger row goes alone). Its keys are built at admission straight into
// the packed list the SDK call takes; the slices beside them are the
// call's other arguments. Parts are pooled with their buffers.
type part struct {
	op     *operation
	lo, hi int
	// owner is op, for operation.Cancel's match alone: scheduler.Cancel
	// calls it without the pool's lock on a snapshot of the queue, so it
	// may read a part another Cancel, or a worker, has meanwhile ended and
	// given back to the part pool (which sets op); owner is read and
	// written atomically. A stale entry it matches is no longer queued,
	// so nothing is removed for it.
	owner atomic.Pointer[operation]

	keys   mooncakesdk.KeyList
	bufs   []uintptr
	sizes  []uint64
	codes  []int64
	exists []int32
	status []contract.RowStatus // the verdicts being worked out, by part row
	open   []bool               // put: the row's key was left open by this part's put
	plan   []putRow             // put: what the part does with each row
	hashes []uint64             // put: each row's key hash in Driver.writing
	// refused is set when a key could not join the part's list after
	// admission had proved it could (see buildPart): the part makes no
	// SDK call and every row ends Fault.
	refused error

	bytes      int64 // the rows' bytes
	unprovable bool  // a call the part had rows in leaves its access unprovable
	inCall     bool  // the part has a row in the call being made (see gather)
	tainted    bool  // an answer for one of its rows in that call left a transfer unprovable
	// shared: the part had rows in a call with another part's;
	// unprovableShared: such a call made its access unprovable though
	// none of its own rows' answers did.
	shared, unprovableShared bool

	// When the part heads a group (see group.go): the group's tally while
	// the pool joins parts to it, the hashes of its keys, and the
	// arguments of the calls that gather rows.
	groupRows  int
	groupBytes int64
	seen       map[uint64]struct{}
	gathered   gatheredArgs
}

// newPart takes a part from the pool for rows [lo, hi) of op.
func (d *Driver) newPart(op *operation, lo, hi int) *part {
	p := d.takePart()
	if p == nil {
		p = new(part)
	}
	n := hi - lo
	p.op, p.lo, p.hi = op, lo, hi
	p.refused = nil
	p.bytes, p.unprovable, p.shared, p.unprovableShared = 0, false, false, false
	p.owner.Store(op)
	p.keys.Reset()
	p.bufs = resize(p.bufs, n)
	p.sizes = resize(p.sizes, n)
	p.codes = resize(p.codes, n)
	p.exists = resize(p.exists, n)
	p.status = resize(p.status, n)
	p.open = resize(p.open, n)
	p.plan = resize(p.plan, n)
	p.hashes = resize(p.hashes, n)
	clear(p.status)
	clear(p.open)
	return p
}

// releasePart returns p to the pool. Nothing may refer to its keys any
// more: the rows it marked in Driver.writing were unmarked when they
// ended.
func (d *Driver) releasePart(p *part) {
	p.op = nil
	p.owner.Store(nil)
	d.keepPart(p)
}

// len returns the number of rows of the part.
func (p *part) len() int { return p.hi - p.lo }

// resize returns s with length n, reusing its array when it can.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// maxKeptParts bounds the parts kept for reuse: enough for every worker
// and a queue of parts behind each, without pinning the buffers of a
// burst for good.
const maxKeptParts = 256

// takePart returns a kept part, or nil.
func (d *Driver) takePart() *part {
	d.partsMu.Lock()
	defer d.partsMu.Unlock()
	n := len(d.kept)
	if n == 0 {
		return nil
	}
	p := d.kept[n-1]
	d.kept[n-1] = nil
	d.kept = d.kept[:n-1]
	return p
}

// keepPart keeps p with its buffers for a later part. Unlike a
// sync.Pool the list survives garbage collections, so a driver working
// at a steady rate allocates no key list or argument slice per row.
func (d *Driver) keepPart(p *part) {
	d.partsMu.Lock()
	defer d.partsMu.Unlock()
	if len(d.kept) < maxKeptParts {
		d.kept = append(d.kept, p)
	}
}
