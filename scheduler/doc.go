// Package scheduler owns the gets-first worker pool a store driver runs
// its parts on: a fixed number of goroutines taking parts of two kinds,
// [Get] and [Put], in a fixed order. The Mooncake driver cuts each
// operation into parts (an SDK call each, or a share of one) for a [Pool];
// any driver that runs its own workers may use it too. The package
// imports only the standard library; it keeps no global state.
//
// # Order
//
// A pool of n workers (n >= 1) has a put limit of max(1, n-1). Parts of
// one kind are taken in the order they were submitted. Each time a
// worker is free it takes a part by this rule:
//
//  1. A put may start when one is queued and fewer than the put limit of
//     puts are running. Such a put is taken when four gets have passed it,
//     or when no get is queued.
//  2. Otherwise the oldest queued get is taken. If a put could have
//     started instead, this get has passed it.
//  3. Otherwise the worker waits for a Submit.
//
// The pool counts the gets that passed a put since the last put was
// taken; the count returns to zero when a put is taken and when no put is
// left queued (after [Pool.Cancel]). Gets taken while the put limit held
// every queued put back do not count, and never wait. So with one worker
// a put gets at least every fifth turn while both kinds wait; with two or
// more, a get never waits behind puts alone.
//
// # Stopping
//
// [Pool.Stop] reports true once every worker goroutine has left its loop:
// no part runs or will run. Everything a run call did before it returned
// happens before Stop reports true, so a driver that calls its onChange
// inside run knows the last callback has been made. Stop cancels nothing:
// queued parts stay queued and never run; [Pool.Cancel] collects them,
// before or after Stop.
//
// # Who calls what
//
// The owner calls [New], which starts the goroutines, and must call
// [Pool.Stop] to release them; [NewGrouped] starts a pool whose workers
// take, with each part, the queued parts of its kind a join function
// accepts, and run them in one call ([Grouping] also bounds the groups of
// a kind running at once). [Pool.Submit], [Pool.Cancel],
// [Pool.Queued], [Pool.Running] and [Pool.Workers] may be called from any
// goroutine, including from inside run. Run is called on the pool's
// goroutines, at most n calls at once, never with the pool's lock held;
// Cancel's predicate runs on Cancel's caller, also without the lock. A
// panic in run is not recovered: run must recover itself. [Pool.Pause]
// holds the workers back without stopping the pool. Submit never blocks;
// the queue has no bound.
//
// [Callbacks] runs the callbacks a driver must deliver off its caller's
// goroutine (the rows a Cancel ends) and lets Drain wait for them;
// [Call] calls a function and returns its panic, for a worker's run
// that must recover.
//
// Why: docs/design/scheduler.md; a worked example: the module's
// README.md.
package scheduler
