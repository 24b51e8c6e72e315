// Package scheduler owns the gets-first worker pool a store driver runs
// its parts on: a fixed number of goroutines taking parts of two kinds,
// [Get] and [Put], in a fixed order. The Mooncake driver cuts each
// operation into parts (one SDK call each) and hands them to a [Pool];
// any other driver that runs its own workers (memdrv) may use it too.
//
// The package imports only the standard library and keeps no global
// state: everything lives in a Pool, and a Pool's goroutines are gone
// once [Pool.Stop] has returned true. Its tests use testify, which only
// the tests import.
//
// # Order
//
// A pool of n workers (n >= 1) has a put limit of max(1, n-1). Parts of
// one kind are taken in the order they were submitted. Each time a
// worker is free it takes a part by this rule:
//
//  1. A put may start when one is queued and fewer than the put limit of
//     puts are running. Such a put is taken when four gets have passed it
//     (see below), or when no get is queued.
//  2. Otherwise the oldest queued get is taken. If a put could have
//     started instead, this get has passed it.
//  3. Otherwise the worker waits for a Submit.
//
// The pool counts the gets that passed a put since the last put was
// taken. The count returns to zero when a put is taken and when no put
// is left queued (after [Pool.Cancel]). So once four gets have gone ahead
// of a waiting put, that put goes next: a fifth get waits for it. Gets
// taken while the put limit kept every queued put from starting do not
// count, since no put could have gone in their place; those gets never
// wait.
//
// Consequences: with one worker, puts and gets share it, and while both
// kinds wait a put gets at least every fifth turn. With two or more
// workers, puts never hold more than n-1 workers, so a get never waits
// behind puts alone: it waits only while every worker is busy and at
// least one of them runs a get, or for a put that four gets have passed.
//
// # Stopping
//
// [Pool.Stop] reports true once every worker goroutine has left its
// loop: no part runs or will run, and the goroutines end right after.
// Everything a run call did before it returned happens before Stop
// reports true, so a driver that calls its onChange callback inside run
// knows, once Stop reports true, that the last callback has been made.
//
// # Who calls what
//
// The owner calls [New], which starts the goroutines, and must call
// [Pool.Stop] to release them. [Pool.Submit], [Pool.Cancel],
// [Pool.Queued], [Pool.Running] and [Pool.Workers] may be called from any
// goroutine, including from inside the run function. The run function is
// called on the pool's goroutines, at most n calls at once, never with
// the pool's lock held. Cancel's predicate is called on Cancel's caller,
// also without the lock.
//
// # Decisions
//
// Where the design was silent, this package decided:
//
//   - A part is any value P chosen by the caller: New takes run func(P),
//     and Cancel passes each queued P to the caller's predicate and
//     returns the removed ones, so the caller can end their rows as
//     cancelled.
//   - New refuses workers < 1 and a nil run with [ErrInvalid]; it does not
//     clamp. A worker count comes from a config file, which should have
//     refused it already, naming the key.
//   - [Pool.Pause] holds the workers back without stopping the pool:
//     queued parts stay queued and cancellable. It exists for a driver's
//     scenario hooks (the conformance suite's Pause: work admitted and
//     left unstarted) and for an owner that wants to hold work back.
//   - Stop stops taking parts but cancels none: parts still queued stay
//     queued and never run; [Pool.Cancel] collects them, before or after
//     Stop. The driver's drain therefore reads: Cancel everything, end
//     those rows Cancelled, then Stop.
//   - Stop may be called again after it reported false; each call waits
//     within its own context. Stop called from inside run can only report
//     false.
//   - A panic in run is not recovered by the pool: like any unrecovered
//     panic in a goroutine it ends the program, with no lock held, so it
//     can neither be swallowed nor leave the pool deadlocked. A run
//     function that calls code which may panic (the Mooncake binding) must
//     recover itself and turn the panic into row results.
//   - Gets that pass a put only while the put limit holds every put back
//     are not counted (see Order), so a full put limit never makes a get
//     wait.
//   - Submit never blocks and the queue has no bound: the driver's
//     admission bounds what it submits.
//
// # Equivalent mutants
//
// go run mage.go mutate (mutation testing) counts these mutants as
// equivalent, not lived: nothing observable differs, so no test can
// kill them.
//
//   - `dispatch.go` in `mergeBySeq`: `a[0].seq < b[0].seq` (CONDITIONALS_BOUNDARY):
//     one counter numbers gets and puts alike, so a get and a put never
//     share a seq and < and <= pick the same entry.
//   - `fifo.go` in `pop`: `q.head >= compactAt && 2*q.head >= len(q.items)` (CONDITIONALS_BOUNDARY):
//     either > moves a queue's live entries down one pop later; the queue
//     holds the same entries in the same order either way, and pop stays
//     O(1) amortized.
package scheduler
