package scheduler

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Pool runs parts of kind Get and Put on a fixed set of worker
// goroutines, in the order the package documentation sets out. P is the
// caller's description of a part; the pool hands it to run and to
// Cancel's predicate and never looks inside it.
//
// Every method is safe to call from any goroutine, including from inside
// run. A Pool must be made by New or NewGrouped.
type Pool[P any] struct {
	run     func(group []P)
	join    func(group []P, next P) bool // nil: every part runs alone
	workers int

	mu      sync.Mutex
	wake    sync.Cond // L is &mu; signalled per queued part, broadcast at Stop
	order   dispatch[P]
	stopped bool
	paused  int           // Pause calls not yet resumed
	alive   int           // worker goroutines not yet returned
	exited  chan struct{} // closed by the last worker to return
	idle    chan struct{} // made by Idle while parts run, closed when none does
}

// New starts a pool of workers goroutines that call run, one part per
// call, never more than workers calls at once. The goroutines stay until
// Stop: the owner must call Stop, or they are never released.
//
// New returns an error wrapping [ErrInvalid], and starts nothing, when
// workers is below one or run is nil.
func New[P any](workers int, run func(P)) (*Pool[P], error) {
	if run == nil {
		return nil, fmt.Errorf("%w: run is nil", ErrInvalid)
	}
	return start(workers, Grouping[P]{}, func(group []P) { run(group[0]) })
}

// Grouping is how the workers of a pool made by [NewGrouped] take parts
// in groups.
type Grouping[P any] struct {
	// Join says which queued parts join the part a worker takes (the
	// group's head): it is asked about the queued parts of the head's
	// kind in order, each with the group so far (the head first); a true
	// answer adds next to the group, and the first false answer ends it,
	// so Join may keep a tally of what it accepted. Required.
	Join func(group []P, next P) bool
	// Limit, when above 0, is the most groups of one kind running at
	// once (the put limit still applies to puts): while Limit groups of a
	// kind run, its queued parts wait, and join the next group. A kind so
	// held back has, for the order rule, nothing that may start.
	Limit int
}

// NewGrouped starts a pool whose workers run parts in groups: a worker
// that takes a part (by the order New's pool keeps) also takes, oldest
// first, the queued parts of the same kind that g.Join accepts, and
// hands them all to one call of run, the part it took first at the
// group's head. A driver uses it to make one store call over the rows of
// several small parts while the workers are busy; with a worker free for
// every part, each runs alone.
//
// Join is called with the pool's lock held, so it must be quick and
// must not call the pool's methods. A group counts as one part
// in the order rule: the gets it holds pass a waiting put once. Its parts
// count in Running until run returns. The group slice is the pool's: run
// must not keep it.
//
// NewGrouped refuses what New refuses, a nil Join, and a negative Limit.
func NewGrouped[P any](workers int, g Grouping[P], run func(group []P)) (*Pool[P], error) {
	switch {
	case run == nil:
		return nil, fmt.Errorf("%w: run is nil", ErrInvalid)
	case g.Join == nil:
		return nil, fmt.Errorf("%w: join is nil", ErrInvalid)
	case g.Limit < 0:
		return nil, fmt.Errorf("%w: limit is %d, want 0 (none) or more", ErrInvalid, g.Limit)
	}
	return start(workers, g, run)
}

// start makes the pool and its goroutines.
func start[P any](workers int, g Grouping[P], run func([]P)) (*Pool[P], error) {
	if workers < 1 {
		return nil, fmt.Errorf("%w: workers is %d, want at least 1", ErrInvalid, workers)
	}
	pool := &Pool[P]{
		run:     run,
		join:    g.Join,
		workers: workers,
		order:   newDispatch[P](workers, g.Limit),
		alive:   workers,
		exited:  make(chan struct{}),
	}
	pool.wake.L = &pool.mu
	for range workers {
		go pool.work()
	}
	return pool, nil
}

// Submit queues p as a part of kind k. It never runs p itself and never
// waits for a worker. The part runs later on a pool goroutine, unless
// Cancel removes it first or Stop is called before a worker takes it.
//
// Submit returns an error wrapping [ErrInvalid] when k is neither Get nor
// Put, and one wrapping [ErrStopped] once Stop has been called; in both
// cases p is not queued.
func (pool *Pool[P]) Submit(k Kind, p P) error {
	if !k.valid() {
		return fmt.Errorf("%w: kind %v is neither get nor put", ErrInvalid, k)
	}
	pool.mu.Lock()
	if pool.stopped {
		pool.mu.Unlock()
		return fmt.Errorf("%w: %v part refused", ErrStopped, k)
	}
	pool.order.add(k, p)
	pool.mu.Unlock()
	pool.wake.Signal()
	return nil
}

// Cancel removes from the queue every part for which match returns true
// and returns the removed parts in the order they were submitted (nil if
// none). A removed part never runs. Parts already taken by a worker are
// never removed: Cancel does not stop running parts.
//
// match is called on the calling goroutine, without the pool's lock (it
// may call the pool's methods), at most once per part queued when Cancel
// began. A part a worker takes while match is being called runs, and is
// not returned; a part submitted after Cancel began is not considered.
//
// Cancel works before and after Stop; after Stop it is how the caller
// collects the parts that will now never run.
func (pool *Pool[P]) Cancel(match func(P) bool) []P {
	pool.mu.Lock()
	gets := slices.Clone(pool.order.gets.live())
	puts := slices.Clone(pool.order.puts.live())
	pool.mu.Unlock()

	getSeqs, putSeqs := matching(gets, match), matching(puts, match)
	if len(getSeqs)+len(putSeqs) == 0 {
		return nil
	}
	pool.mu.Lock()
	defer pool.mu.Unlock()
	return pool.order.remove(getSeqs, putSeqs)
}

// matching returns, in rising order, the seq of every entry whose part
// match accepts.
func matching[P any](entries []entry[P], match func(P) bool) []uint64 {
	var seqs []uint64
	for _, e := range entries {
		if match(e.part) {
			seqs = append(seqs, e.seq)
		}
	}
	return seqs
}

// Stop stops the pool taking parts and waits, within ctx, for the parts
// running to return. It reports true when every worker goroutine has
// left its loop: no part runs and none will, and the goroutines end right
// after; whatever the run calls did happens before Stop reports true.
// It reports false when ctx ended first; the workers still running then
// return as their parts do, and Stop may be called again to wait more.
//
// From the first call on, Submit fails with [ErrStopped] and queued parts
// stay queued, never run: collect them with Cancel. Stop cancels no
// running part; the caller's run function must end on its own.
//
// Called from inside run, Stop cannot report true (it would wait for the
// calling part), so it returns false when ctx ends.
func (pool *Pool[P]) Stop(ctx context.Context) bool {
	pool.mu.Lock()
	if !pool.stopped {
		pool.stopped = true
		pool.wake.Broadcast()
	}
	pool.mu.Unlock()

	select {
	case <-pool.exited:
		return true
	case <-ctx.Done():
	}
	// The context ended; the workers may have returned at the same time.
	select {
	case <-pool.exited:
		return true
	default:
		return false
	}
}

// Pause stops the workers taking parts until resume is called: parts
// submitted meanwhile stay queued (Cancel removes them, Stop leaves them),
// parts already taken run on. Pauses nest: workers take parts again once
// every pause was resumed. resume may be called more than once; only the
// first call counts. A driver's tests use it to stage work that is
// admitted but not started; an owner may use it to hold work back.
func (pool *Pool[P]) Pause() (resume func()) {
	pool.mu.Lock()
	pool.paused++
	pool.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			pool.mu.Lock()
			pool.paused--
			pool.mu.Unlock()
			pool.wake.Broadcast()
		})
	}
}

// Idle waits within ctx until no part runs, and reports whether that
// came first. Parts may start again at once; while the pool is paused
// (Pause) none does, so a true answer then means the pool is idle until
// resume: how an owner waits for the parts in flight without stopping
// the pool. Called from inside run, it cannot report true.
func (pool *Pool[P]) Idle(ctx context.Context) bool {
	pool.mu.Lock()
	if pool.order.running == 0 {
		pool.mu.Unlock()
		return true
	}
	if pool.idle == nil {
		pool.idle = make(chan struct{})
	}
	idle := pool.idle
	pool.mu.Unlock()
	select {
	case <-idle:
		return true
	case <-ctx.Done():
		return false
	}
}

// Queued returns the number of parts waiting for a worker.
func (pool *Pool[P]) Queued() int {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	return pool.order.queued()
}

// Running returns the number of parts taken by a worker whose run call
// has not yet returned.
func (pool *Pool[P]) Running() int {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	return pool.order.running
}

// Workers returns the number of worker goroutines the pool was made
// with.
func (pool *Pool[P]) Workers() int { return pool.workers }

// work is one worker goroutine: take a part (and the parts that join
// it), run them without the lock, repeat until Stop. A panic in run is
// not recovered here; it ends the program like any unrecovered panic,
// with the lock not held.
func (pool *Pool[P]) work() {
	var group []P // the worker's own, reused from group to group
	pool.mu.Lock()
	for !pool.stopped {
		var k Kind
		var p P
		ok := false
		if pool.paused == 0 {
			k, p, ok = pool.order.take()
		}
		if !ok {
			pool.wake.Wait()
			continue
		}
		group = append(group[:0], p)
		if pool.join != nil {
			group = pool.order.takeJoining(k, group, pool.join)
		}
		pool.mu.Unlock()
		pool.run(group)
		n := len(group)
		clear(group) // let the parts be collected
		pool.mu.Lock()
		if pool.order.done(k, n) {
			pool.wake.Signal() // a part the limit held back may start
		}
		if pool.order.running == 0 && pool.idle != nil {
			close(pool.idle)
			pool.idle = nil
		}
	}
	pool.alive--
	if pool.alive == 0 {
		close(pool.exited)
	}
	pool.mu.Unlock()
}
