package scheduler

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// model is an independent statement of the ordering rule, kept beside a
// dispatch and checked against every step it takes.
type model struct {
	workers, limit int
	gets, puts     []int // queued ids, oldest first
	running        []running
	passed         int
	taken          map[int]int // id → times taken or cancelled
}

type running struct {
	kind Kind
	id   int
}

func (m *model) putsRunning() int {
	n := 0
	for _, r := range m.running {
		if r.kind == Put {
			n++
		}
	}
	return n
}

// take makes a free worker take a part from d and checks the choice.
func (m *model) take(t *testing.T, d *dispatch[int]) bool {
	putMayStart := len(m.puts) > 0 && m.putsRunning() < m.limit
	k, id, ok := d.take()
	switch {
	case !ok:
		require.Empty(t, m.gets, "nothing taken while a get is queued")
		require.False(t, putMayStart, "nothing taken while a put may start")
		return false
	case k == Put:
		require.True(t, putMayStart, "put %d taken beyond the put limit", id)
		require.True(t, len(m.gets) == 0 || m.passed >= getsAhead,
			"put %d taken while gets wait and only %d passed", id, m.passed)
		require.Equal(t, m.puts[0], id, "puts are taken oldest first")
		m.puts, m.passed = m.puts[1:], 0
	case k == Get:
		require.False(t, putMayStart && m.passed >= getsAhead,
			"get %d taken though %d gets passed a put that may start", id, m.passed)
		require.NotEmpty(t, m.gets, "get %d taken from an empty queue", id)
		require.Equal(t, m.gets[0], id, "gets are taken oldest first")
		m.gets = m.gets[1:]
		if putMayStart {
			m.passed++
		}
	default:
		t.Fatalf("take returned kind %v", k)
	}
	m.running = append(m.running, running{k, id})
	m.taken[id]++
	return true
}

func (m *model) check(t *testing.T, d *dispatch[int]) {
	require.Equal(t, len(m.running), d.running, "running")
	require.Equal(t, m.putsRunning(), d.putsRunning, "puts running")
	require.LessOrEqual(t, d.putsRunning, m.limit, "puts running")
	require.LessOrEqual(t, d.running, m.workers, "parts running")
	require.Equal(t, len(m.gets)+len(m.puts), d.queued(), "queued")
	require.Equal(t, m.passed, d.passed, "gets that passed a put")
	require.LessOrEqual(t, d.passed, getsAhead, "gets that passed a put")
}

// FuzzDispatch drives a dispatch with a random sequence of submissions,
// takes by free workers, returns and cancellations, and checks every
// choice against the model. The first byte picks the worker count.
func FuzzDispatch(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0, 0, 2, 2, 3, 0, 2, 3, 0, 2, 3, 0, 2, 3, 0, 2, 3, 0, 2})
	f.Add([]byte{3, 1, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0, 0, 2, 3, 1, 2, 3, 0, 2})
	f.Add([]byte{1, 1, 1, 2, 0, 0, 0, 2, 4, 3, 2, 3, 0, 2, 2, 2})
	f.Add([]byte{4, 0, 1, 0, 1, 0, 1, 4, 0, 2, 2, 2, 2, 3, 1, 3, 2, 2})
	// One worker: a get passes a put, then every queued part is cancelled.
	f.Add([]byte{0, 1, 0, 0, 0, 2, 3, 0, 2, 4, 0, 1, 0, 2})
	f.Fuzz(checkDispatch)
}

// checkDispatch runs one sequence of operations against a dispatch and
// the model. The first byte picks the worker count; each later byte is an
// operation (by its value mod 5: add a get, add a put, a free worker
// takes, a running part returns, cancel), some reading one more byte.
func checkDispatch(t *testing.T, ops []byte) {
	if len(ops) == 0 {
		return
	}
	workers := 1 + int(ops[0]%5)
	ops = ops[1:]
	d := newDispatch[int](workers, 0)
	m := &model{workers: workers, limit: max(1, workers-1), taken: map[int]int{}}
	next := 0
	for i := 0; i < len(ops); i++ {
		switch ops[i] % 5 {
		case 0:
			d.add(Get, next)
			m.gets = append(m.gets, next)
			next++
		case 1:
			d.add(Put, next)
			m.puts = append(m.puts, next)
			next++
		case 2:
			if len(m.running) < workers {
				m.take(t, &d)
			}
		case 3:
			if len(m.running) > 0 {
				j := 0
				if i+1 < len(ops) {
					i++
					j = int(ops[i]) % len(m.running)
				}
				d.done(m.running[j].kind, 1)
				m.running = slices.Delete(m.running, j, j+1)
			}
		case 4:
			mod := 2
			if i+1 < len(ops) {
				i++
				mod = 1 + int(ops[i]%4)
			}
			getSeqs, putSeqs := seqsOf(d.gets.live(), mod), seqsOf(d.puts.live(), mod)
			gone := d.remove(getSeqs, putSeqs)
			var want []int // ids rise with submission order
			for _, id := range slices.Concat(m.gets, m.puts) {
				if id%mod == 0 {
					want = append(want, id)
				}
			}
			slices.Sort(want)
			require.Equal(t, want, gone, "cancelled ids, in submission order")
			for _, id := range gone {
				m.taken[id]++
			}
			keep := func(id int) bool { return id%mod == 0 }
			m.gets = slices.DeleteFunc(m.gets, keep)
			m.puts = slices.DeleteFunc(m.puts, keep)
			if len(m.puts) == 0 {
				m.passed = 0
			}
		}
		m.check(t, &d)
	}
	// Let every part return and the workers take what is left: the
	// queues empty and every part was taken or cancelled once.
	for len(m.running) > 0 || d.queued() > 0 {
		for _, r := range m.running {
			d.done(r.kind, 1)
		}
		m.running = m.running[:0]
		for len(m.running) < workers && m.take(t, &d) {
		}
		m.check(t, &d)
	}
	for id := range next {
		require.Equal(t, 1, m.taken[id], "part %d taken or cancelled", id)
	}
}

// seqsOf returns the seqs of the entries whose part (an id) divides by mod.
func seqsOf(entries []entry[int], mod int) []uint64 {
	var seqs []uint64
	for _, e := range entries {
		if e.part%mod == 0 {
			seqs = append(seqs, e.seq)
		}
	}
	return seqs
}

func TestFIFOKeepsOrderAcrossCompaction(t *testing.T) {
	var q fifo[int]
	var shadow []int // what q should hold, oldest first
	next := 0
	for round := range 50 {
		for range 40 + round {
			next++
			q.push(entry[int]{seq: uint64(next), part: next})
			shadow = append(shadow, next)
		}
		for range 30 + round/2 {
			require.Equal(t, shadow[0], q.pop().part, "round %d", round)
			shadow = shadow[1:]
		}
		require.True(t, q.head < compactAt || 2*q.head < len(q.items),
			"round %d: %d popped slots kept in front of %d", round, q.head, len(q.items))
	}
	// Remove every third queued entry, then drain: order is kept.
	var seqs []uint64
	for _, e := range q.live() {
		if e.part%3 == 0 {
			seqs = append(seqs, e.seq)
		}
	}
	gone := q.remove(seqs, nil)
	var goneParts []int
	for _, e := range gone {
		goneParts = append(goneParts, e.part)
	}
	keep := slices.DeleteFunc(slices.Clone(shadow), func(id int) bool { return id%3 == 0 })
	removed := slices.DeleteFunc(slices.Clone(shadow), func(id int) bool { return id%3 != 0 })
	assert.Equal(t, removed, goneParts, "removed entries, oldest first")
	var left []int
	for q.len() > 0 {
		left = append(left, q.pop().part)
	}
	assert.Equal(t, keep, left, "entries left, oldest first")
}

func TestFIFOPopZeroesTheSlot(t *testing.T) {
	var q fifo[*int]
	v := 7
	q.push(entry[*int]{seq: 1, part: &v})
	q.push(entry[*int]{seq: 2, part: &v})
	q.pop()
	assert.Nil(t, q.items[0].part, "a popped part is not kept alive")
}
