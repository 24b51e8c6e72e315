package memdrv

// recency orders a bounded store's evictable objects by their last use,
// the most recent first: complete objects in chunks that no get reads
// now. An object being written is not in it yet, and a get takes the
// object it reads out of it until it is done (then it is the most
// recent), so eviction, which takes the last, never takes either. It is
// guarded by the store's lock.
type recency struct {
	first, last *entry
	chunks      int64 // chunks the objects in it hold: what eviction can free
}

// add puts e first (its use is the latest).
func (r *recency) add(e *entry) {
	e.listed = true
	e.older, e.newer = r.first, nil
	if r.first != nil {
		r.first.newer = e
	} else {
		r.last = e
	}
	r.first = e
	r.chunks += int64(len(e.obj.chunks))
}

// remove takes e out, if it is in.
func (r *recency) remove(e *entry) {
	if !e.listed {
		return
	}
	if e.newer != nil {
		e.newer.older = e.older
	} else {
		r.first = e.older
	}
	if e.older != nil {
		e.older.newer = e.newer
	} else {
		r.last = e.newer
	}
	e.older, e.newer, e.listed = nil, nil, false
	r.chunks -= int64(len(e.obj.chunks))
}

// use makes e, if it is in, the most recently used.
func (r *recency) use(e *entry) {
	if e.listed && r.first != e {
		r.remove(e)
		r.add(e)
	}
}
