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
}

func newDispatch[P any](workers int) dispatch[P] {
	return dispatch[P]{putLimit: putLimit(workers)}
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
//  1. A put that may start (puts run on fewer than putLimit workers) is
//     taken when getsAhead gets have passed it, or when no get is queued.
//  2. Otherwise the oldest get is taken; if a put could have started
//     instead, that get counts as having passed it.
//  3. Otherwise nothing is taken.
func (d *dispatch[P]) take() (Kind, P, bool) {
	putMayStart := d.puts.len() > 0 && d.putsRunning < d.putLimit
	switch {
	case putMayStart && (d.passed >= getsAhead || d.gets.len() == 0):
		d.passed = 0
		d.putsRunning++
		d.running++
		return Put, d.puts.pop().part, true
	case d.gets.len() > 0:
		if putMayStart {
			d.passed++
		}
		d.running++
		return Get, d.gets.pop().part, true
	}
	var zero P
	return 0, zero, false
}

// done records that a part of kind k, taken by take, has returned.
func (d *dispatch[P]) done(k Kind) {
	d.running--
	if k == Put {
		d.putsRunning--
	}
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
