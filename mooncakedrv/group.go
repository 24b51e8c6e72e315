package mooncakedrv

import (
	"hash/maphash"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/scheduler"
)

// grouping is how the driver's workers take parts: joined while they are
// busy (unless CallPerPart), at most CallsInFlight workers a direction
// at once (when set).
func (d *Driver) grouping() scheduler.Grouping[*part] {
	g := scheduler.Grouping[*part]{Join: d.joins, Limit: d.cfg.CallsInFlight}
	if d.cfg.CallPerPart {
		g.Join = func([]*part, *part) bool { return false }
	}
	return g
}

// joins is the worker pool's join: while the workers are busy, a queued
// part of the same direction joins the part a worker takes as long as
// their rows together stay within RowsPerCall and BytesPerCall, so that
// one SDK call moves them all. A part whose keys could not be built (it
// makes no call) neither joins nor is joined. It runs under the pool's
// lock and keeps the group's tally in its head.
func (d *Driver) joins(group []*part, next *part) bool {
	head := group[0]
	if len(group) == 1 {
		head.groupRows, head.groupBytes = head.len(), head.bytes
	}
	rows, bytes := head.groupRows+next.len(), head.groupBytes+next.bytes
	if head.refused != nil || next.refused != nil || rows > d.cfg.RowsPerCall || bytes > d.cfg.BytesPerCall {
		return false
	}
	head.groupRows, head.groupBytes = rows, bytes
	return true
}

// apart reorders group, in place, into the parts that may share one
// call and the rest: no key may go twice into one call (the library maps
// a call's buffers by key, so a repeated key's answers prove nothing for
// its copies). A part whose key another part
// before it holds waits for a later call of the same group. The keys
// compared are a get's every key and a put's keys it may send (those it
// marked in the writing set; the others end NotReady without a call),
// by hash: two keys that only share a hash go apart too, which costs a
// call and nothing else.
func (d *Driver) apart(group []*part) (now, later []*part) {
	if len(group) == 1 {
		return group, nil
	}
	head := group[0]
	if head.seen == nil {
		head.seen = make(map[uint64]struct{})
	}
	seen := head.seen
	clear(seen)
	n := 0
	for i, p := range group {
		if !d.fresh(seen, p) {
			continue
		}
		for j := range p.len() {
			if p.sends(j) {
				seen[p.hashes[j]] = struct{}{}
			}
		}
		group[n], group[i] = group[i], group[n]
		n++
	}
	return group[:n], group[n:]
}

// fresh reports whether none of the keys p may send is in seen. A get's
// key hashes are made here (a put's were made when it was queued).
func (d *Driver) fresh(seen map[uint64]struct{}, p *part) bool {
	get := p.op.dir == contract.GetDir
	for j := range p.len() {
		if get {
			p.hashes[j] = maphash.Bytes(d.seed, p.keys.Key(j))
		}
		if _, dup := seen[p.hashes[j]]; dup && p.sends(j) {
			return false
		}
	}
	return true
}

// sends reports whether row j may go into one of the part's calls: every
// get row; a put row unless a put of this driver was writing its key at
// admission (planPut set it to end NotReady without a call).
func (p *part) sends(j int) bool { return p.op.dir == contract.GetDir || p.plan[j] != putWriting }
