package scheduler

// getsAhead is how many gets a waiting put lets go ahead of it before it
// is taken next.
const getsAhead = 4

// putLimit returns how many workers may run puts at once:
// max(1, workers-1). With two or more workers one worker is always left
// to gets.
func putLimit(workers int) int { return max(1, workers-1) }

// dispatch is the pool's queue state and its ordering rule, without
// goroutines or locks: the pool calls it with its lock held. Keeping it
// apart lets the rule be tested step by step.
type dispatch[P any] struct {
	putLimit int
	gets     fifo[P]
	puts     fifo[P]
	seq      uint64 // seq of the last part added

	running     int // parts taken and not yet done
	putsRunning int // of which puts

	// passed counts the gets taken, since the last put was taken, at a
	// moment when a put could have been taken instead. It returns to zero
	// when a put is taken or no put is left queued.
	passed int

	// limit (0: none) is the most groups of one kind running at once;
	// groups counts them by kind.
	limit  int
	groups [2]int
}

func newDispatch[P any](workers, limit int) dispatch[P] {
	return dispatch[P]{putLimit: putLimit(workers), limit: limit}
}

// mayStart reports whether a queued part of kind k, in q, may head a
// group now: one is queued and the limit lets another group of k run.
func (d *dispatch[P]) mayStart(k Kind, q *fifo[P]) bool {
	return q.len() > 0 && (d.limit == 0 || d.groups[k-1] < d.limit)
}

// add queues p as a part of kind k.
func (d *dispatch[P]) add(k Kind, p P) {
	d.seq++
	e := entry[P]{seq: d.seq, part: p}
	if k == Get {
		d.gets.push(e)
	} else {
		d.puts.push(e)
	}
}

// take picks the part a free worker runs next and counts it as running.
// It reports false when no queued part may start now: no get is queued,
// and no put is queued or puts already run on putLimit workers.
//
// The rule, in order:
//  1. A put that may start (puts run on fewer than putLimit workers, and
//     the group limit lets it) is taken when getsAhead gets have passed
//     it, or when no get may start.
//  2. Otherwise the oldest get is taken if the group limit lets it; if a
//     put could have started instead, that get counts as having passed
//     it.
//  3. Otherwise nothing is taken.
func (d *dispatch[P]) take() (Kind, P, bool) {
	putMayStart := d.putsRunning < d.putLimit && d.mayStart(Put, &d.puts)
	getMayStart := d.mayStart(Get, &d.gets)
	switch {
	case putMayStart && (d.passed >= getsAhead || !getMayStart):
		d.passed = 0
		d.putsRunning++
		d.running++
		d.groups[Put-1]++
		return Put, d.puts.pop().part, true
	case getMayStart:
		if putMayStart {
			d.passed++
		}
		d.running++
		d.groups[Get-1]++
		return Get, d.gets.pop().part, true
	}
	var zero P
	return 0, zero, false
}

// takeJoining appends to group, oldest first, the queued parts of kind k
// that join accepts, up to its first refusal, and counts them as
// running. The worker that took group's head runs them with it: the put
// limit, which counts workers, is not touched.
func (d *dispatch[P]) takeJoining(k Kind, group []P, join func([]P, P) bool) []P {
	q := &d.gets
	if k == Put {
		q = &d.puts
	}
	for q.len() > 0 && join(group, q.live()[0].part) {
		group = append(group, q.pop().part)
		d.running++
	}
	return group
}

// done records that a group of n parts of kind k, taken by take and
// takeJoining, has returned. It reports whether a part the limit held
// back may now start.
func (d *dispatch[P]) done(k Kind, n int) bool {
	d.running -= n
	d.groups[k-1]--
	if k == Put {
		d.putsRunning--
	}
	return d.limit > 0 && d.queued() > 0
}

// queued returns the number of parts waiting to be taken.
func (d *dispatch[P]) queued() int { return d.gets.len() + d.puts.len() }

// remove takes the queued parts whose seq is in getSeqs or putSeqs (each
// in rising order) out of the queues and returns them in submission
// order. A seq no longer queued is skipped.
func (d *dispatch[P]) remove(getSeqs, putSeqs []uint64) []P {
	gone := d.gets.remove(getSeqs, nil)
	split := len(gone)
	gone = d.puts.remove(putSeqs, gone)
	if d.puts.len() == 0 {
		d.passed = 0
	}
	return mergeBySeq(gone[:split], gone[split:])
}

// mergeBySeq merges two lists of entries, each in rising seq order, into
// one list of their parts in rising seq order.
func mergeBySeq[P any](a, b []entry[P]) []P {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := make([]P, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].seq < b[0].seq {
			out, a = append(out, a[0].part), a[1:]
		} else {
			out, b = append(out, b[0].part), b[1:]
		}
	}
	for _, e := range a {
		out = append(out, e.part)
	}
	for _, e := range b {
		out = append(out, e.part)
	}
	return out
}
