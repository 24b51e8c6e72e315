package scheduler

// entry is one queued part and its submission number. Numbers rise with
// every Submit across both kinds, so they give the submission order and
// identify a part without comparing P values.
type entry[P any] struct {
	seq  uint64
	part P
}

// fifo is a first-in first-out queue of entries in rising seq order. It
// is not safe for concurrent use; the pool guards it with its lock.
type fifo[P any] struct {
	items []entry[P]
	head  int // items[:head] have been popped and zeroed
}

// compactAt is the number of popped slots a queue keeps at its front
// before pop moves the live entries down. Moving only when the popped
// slots are also at least half the slice keeps pop O(1) amortized.
const compactAt = 64

func (q *fifo[P]) len() int { return len(q.items) - q.head }

func (q *fifo[P]) push(e entry[P]) { q.items = append(q.items, e) }

// pop removes and returns the oldest entry. The queue must not be empty.
func (q *fifo[P]) pop() entry[P] {
	e := q.items[q.head]
	q.items[q.head] = entry[P]{} // let the part be collected
	q.head++
	switch {
	case q.head == len(q.items):
		q.items, q.head = q.items[:0], 0
	case q.head >= compactAt && 2*q.head >= len(q.items):
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	return e
}

// live returns the queued entries, oldest first. The slice aliases the
// queue: read it before the queue changes.
func (q *fifo[P]) live() []entry[P] { return q.items[q.head:] }

// remove takes out the entries whose seq is in seqs (rising order) and
// appends them, oldest first, to out. A seq that is no longer queued is
// skipped.
func (q *fifo[P]) remove(seqs []uint64, out []entry[P]) []entry[P] {
	if len(seqs) == 0 || q.len() == 0 {
		return out
	}
	kept := q.items[:q.head]
	for _, e := range q.items[q.head:] {
		for len(seqs) > 0 && seqs[0] < e.seq {
			seqs = seqs[1:]
		}
		if len(seqs) > 0 && seqs[0] == e.seq {
			out = append(out, e)
			seqs = seqs[1:]
			continue
		}
		kept = append(kept, e)
	}
	clear(q.items[len(kept):])
	q.items = kept
	if q.len() == 0 {
		q.items, q.head = q.items[:0], 0
	}
	return out
}
