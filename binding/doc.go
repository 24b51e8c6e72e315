// Package binding is kvshare's backend over any store driver, the way
// database/sql is over database/sql/driver. It imports only contract,
// keys and rowbatch.
//
// # What it owns
//
// [Regions], the region binding: a lender's regions registered with one
// [contract.Driver] under the lender's [Hold], and the hold's release once
// every region is confirmed unregistered.
//
// [Backend], the blob backend: a [contract.Backend] over the driver of a
// Regions. It checks each submitted view, cuts each group into driver
// calls (package rowbatch), hands every call to the driver as soon as it
// is cut, on the submitter's goroutine, and learns of progress only
// through the driver's onChange. Every call carries the backend's
// [keys.Stem] as its key maker: the driver builds each key from the
// row's name, so no key string is made on the submit path.
// It keeps no queue and runs no worker of its own: the one goroutine it
// starts, after Shutdown, drains the driver and unbinds the regions (and
// the slow-call timer, when it fires, logs on a goroutine of its own).
//
// # What it promises
//
//   - Memory lent to a store is given back only on proof that access
//     ended. An attempt quiesces only when every call it handed over has
//     access Ended; a call whose access is Unprovable, or whose driver
//     broke the protocol, keeps the attempt open, its slots lent, its
//     regions registered and the hold held, for good, and is counted in
//     [contract.Stats].CallsUnprovable.
//   - A call counts as started (lent, in flight) before it enters the
//     driver. Each call's results and its access end are recorded once;
//     later answers of the driver change nothing.
//   - Nothing reaches the driver from a view that fails validation, and
//     the error names the group and row ([SubmissionError]).
//   - Wake is called after an attempt's outcome or quiescence is
//     published, outside every lock.
//   - A driver that breaks the protocol is contained: the call is held as
//     unprovable (unless its access end was already recorded), the
//     violation is logged once and named by every later submission's
//     error ([ViolationError]); calls not yet handed over end Cancelled,
//     holding no memory; calls already in the driver run on.
//     What counts as a violation: a panic from Put, Get, Poll or Cancel;
//     an error from Put or Get that does not wrap
//     [contract.ErrDriverRejected]; an operation together with an error
//     (whatever the error wraps: the operation may run); a nil operation
//     without an error; a Poll with the wrong number of results, an
//     unknown status or access state, access leaving Open before every
//     row is final, or a final row status that changes (back to Pending,
//     or to another verdict) in a later Poll.
//   - [Backend.Shutdown] never calls the driver. It returns nil once the
//     hold's Release has returned, and the labels of what is still held
//     when its context ends or when nothing can change any more ("hold"
//     when only the hold is left, its Release under way).
//   - [Backend.CallLimit] tells a lease holder the most rows and bytes one
//     driver call may pin in a region.
//
// The owner's cleanup order: Shutdown returns no labels (the binding has
// drained the driver, unregistered every region and released the hold;
// [Backend.Closed] is closed); then whoever opened the driver calls its
// Close, last; only then may the lender free the memory.
//
// # What it refuses
//
// Bind refuses (releasing the hold, [contract.ErrConstructionRejected])
// a region with bad geometry, a list with no region the driver can
// reach, and a registration failure that certifies nothing escaped. A
// region with no slots (SlotCount 0) is not bad geometry to Bind: its
// other fields are checked, it is skipped without asking the driver,
// and its index stays unserved (a view naming it is refused); only a
// list with nothing left to serve is refused. A
// submission is refused with [contract.ErrInvalidSubmission] for a region
// out of range or not served, slots and names of different lengths, a
// slot out of range, an empty name or one over [keys.MaxNameBytes], a
// fetch hint for a driver without Hints, a non-nil publish destination,
// a direction the driver does not serve, and a fetch that names one slot
// twice; after Shutdown or a violation, with
// [contract.ErrSubmissionRejected]. [Regions.Unbind] on regions a
// backend owns is refused ([ErrOwned]), and [New] refuses regions on
// which Unbind was called, even an Unbind that did not finish (some may
// be unregistered already).
//
// # Decisions
//
// Where the design was silent, binding decided:
//
//   - A Miss does not stop a fetch; only a Fault does (and a call that
//     fails as a whole). A fetch wants a prefix, but Delivered is per row
//     and a view may hold several groups (layer groups, say), where a
//     miss in one says nothing of the next; and stopping would only save
//     calls not yet handed over, which with an asynchronous driver are
//     none. NotReady and Declined are undelivered without a fault, as
//     the design says.
//   - A Fault in a fetch stops it: no later call is handed over, and the
//     calls after the faulted one that the driver holds are asked to
//     Cancel (advisory). Earlier calls are never cancelled; the outcome
//     waits for them, so a prefix they deliver is never lost.
//   - A publish stops only when a call fails as a whole: the driver
//     refused it (ErrDriverRejected) or broke the protocol. A call whose
//     rows all Fault is not a whole-call failure.
//   - The outcome's Fault is that of the earliest row in view order that
//     faulted, in a publish as in a fetch, wrapping [ErrRowFault] (group,
//     row and key named), the driver's refusal, or the [ViolationError].
//     A violation in a call whose results were already recorded keeps
//     those verdicts and counts as a fault at the row after the call
//     (the attempt stops there), so an outcome never hides a violation
//     that stopped it. Cancel makes no fault: the rows simply are not
//     delivered.
//   - A forced outcome (Shutdown) has the fault [ErrOutcomeForced],
//     wrapping the attempt's earlier fault when it had one. Its Delivered
//     holds the rows Ready by then; rows whose results come later are
//     counted in Stats but never change the outcome, so Delivered is never
//     written once the outcome is known and is handed out uncopied.
//   - Results are recorded when every row of a call is final, not row by
//     row. The backend polls once right after Put or Get returns, so an
//     onChange that came before (even inside Put or Get) is never lost.
//     Polls of one call take turns: each snapshot is checked against the
//     final statuses seen before and recorded before the next is taken,
//     into a status buffer of the attempt's (Poll appends to it).
//   - The submit path allocates nothing per row. Each attempt takes
//     scratch from a pool: the rows and spans handed to the driver, the
//     copy of the view's names (the driver borrows a name until its
//     access ends, which may be after the outcome, when the caller may
//     reuse the view), the status buffers, the cutter's table and the
//     list of calls. It goes back to the pool once the attempt has
//     quiesced and the handover has finished; an attempt that never
//     quiesces keeps it, since a driver may still read its names. What
//     is allocated per submission: the attempt, its Done channel, its
//     Delivered slice (the caller's, so never pooled), and per call the
//     call and its onChange. Scratch of views over 65536 rows is not
//     pooled.
//   - Handover stays on the submitter's goroutine (the design allows one
//     goroutine of the backend per attempt instead): the first call
//     reaches the driver before the rest of the view is cut, an
//     admission refusal is seen by the submitter's outcome at once, and
//     no goroutine hop is added between submission and the store. The
//     figures that decided it are in BENCHMARKS.md.
//   - A call that is inside Put or Get when its attempt is stopped (a
//     fetch fault in an earlier call, or Shutdown) is asked to Cancel as
//     soon as its operation arrives. (Attempt.Cancel cannot come then:
//     the submitter hands every call over before it has the attempt.)
//   - A registration that returns a non-zero handle together with an
//     error may be live, whatever the error wraps: the hold is kept and
//     that handle revoked (and a handle the error itself carries, too).
//   - Two rows of one fetch may not name the same slot (the store would
//     write it twice, and Delivered would lie about one of them); a
//     publish may (the same bytes under two keys). Every slot of the
//     binding has one bit in a pooled set, so the check costs a few
//     nanoseconds a row (a binding of more than 2^24 slots uses a map
//     per fetch instead).
//   - An empty view (or group) is allowed: its attempt has an empty
//     outcome and quiesces at once, without a driver call.
//   - A submission after Shutdown or a violation is rejected before the
//     view is validated.
//   - After a violation the binding never drains the driver, unregisters
//     a region or releases the hold: the driver's answers prove nothing
//     any more. The violating call is held as unprovable in any case
//     (unless its access end was recorded before).
//   - A registration that may be live keeps the hold, with one region at
//     a time and with RegionsTogether alike: Bind rolls back what
//     registered cleanly (asking once each) and returns a
//     [*LiveRegistrationError] naming what is held; its Unbind revokes the
//     handle, retrying refusals, and only then releases the hold. A
//     failure that left no handle (an error certifying nothing, a panic, a
//     zero registration without an error) can never be revoked: the hold
//     is then kept for good. A rollback the driver refuses also keeps
//     the hold.
//   - Every region's geometry is checked before the driver is asked,
//     served or not, with one region at a time as with RegionsTogether.
//     Regions the driver cannot reach keep their index, unserved, so a
//     view naming one is refused rather than misread.
//   - Revocation is retried with a pause doubling from 1 ms to 1 s; so is
//     Drain after Shutdown. Each Drain and each round of Unbind the
//     retiring goroutine makes is bounded by 10 s; the first Drain that
//     answers false, and every round that leaves a region registered,
//     are logged.
//   - Shutdown leaves the advisory Cancel of the calls the driver still
//     holds to the retiring goroutine, and waits until the hold is
//     released: a nil answer means the owner may close the driver.
//     Labels read "attempt <id> (fetch)" or "attempt <id> (publish)", in
//     submission order, then "region <index>", in index order.
//   - One timer per backend watches slow calls: it fires at the oldest
//     unlogged call's deadline, logs every call due (once each), and
//     re-arms for the next; it is stopped whenever no call is in flight.
//     A call held as unprovable leaves the watch (it is counted in
//     CallsUnprovable instead, and warned about once when it becomes
//     unprovable). SlowCall < 0 turns the log off.
//   - CallsInFlight counts calls whose access is Open; unprovable calls
//     are not in flight, but their rows and bytes stay in RowsLent and
//     BytesLent. OldestCall is the age of the oldest call in flight.
//   - One mutex guards a backend's state; the driver is never called
//     under it, and neither are Wake nor the logger.
//
// # Equivalent mutants
//
// go run mage.go mutate (mutation testing) counts these mutants as
// equivalent, not lived: nothing observable differs, so no test can
// kill them.
//
//   - `attempt.go` in `cancelLocked`: `from >= len(a.s.calls)` (CONDITIONALS_BOUNDARY):
//     with > a from equal to the number of calls ranges over no call and
//     returns nil all the same.
//   - `calllimit.go` in `CallLimit`: `rows > r.SlotCount` (CONDITIONALS_BOUNDARY):
//     where they are equal, rows already holds r.SlotCount.
//   - `flight.go` in `watchLocked`: `b.slow <= 0` (CONDITIONALS_BOUNDARY):
//     New turns a SlowCall of 0 into DefaultSlowCall, so slow is never 0.
//   - `handover.go` in `endAccessLocked`: `c.a.unprovable++` (INCREMENT_DECREMENT):
//     an attempt's count of unprovable calls is only ever compared with 0
//     (finalLocked) and never lowered; counting down it is never 0 again
//     either.
//   - `scratch.go` in `grow`: `cap(s) < n` (CONDITIONALS_BOUNDARY): with <=
//     a slice with room for exactly n is made anew; every caller writes
//     (or clears) each element before reading it, so old contents are
//     never relied on.
//   - `shutdown.go` in `drain`: `try++` (INCREMENT_DECREMENT): try is only
//     compared with 0, to warn once; counting down from 0 it never
//     returns to 0 either.
//   - `unbind.go` in `revokePass`: `left++` (INCREMENT_DECREMENT): the count
//     of refused registrations is only compared with 0 (unbind retries
//     while it is not); counting down it is never 0 either.
//   - `validate.go` in `init`: `s.base[i] = -1` (ARITHMETIC_BASE, INVERT_NEGATIVES):
//     the entry of an unserved region is never read: validate refuses a
//     group naming one before it reads the entry, and distinctByMap runs
//     only on a view validate passed.
//   - `validate.go` in `init`: `s.bits > maxSlotBits` (CONDITIONALS_BOUNDARY):
//     a binding of exactly 2^24 slots checks fetches with a map instead of
//     a stamp table: the same answers (the tests check both ways).
//   - `validate.go` in `take`: `t.stamp++` (INCREMENT_DECREMENT): stamps
//     counted down give every check a stamp that no entry carries just as
//     well; only the wrap, 2^32 checks on, comes another way, and it
//     clears the table.
//   - `validate.go` in `take`: `t.stamp == 0` (CONDITIONALS_NEGATION): with
//     != every check clears the table and uses stamp 1: the same answers,
//     only at the cost the stamps exist to avoid (no test can see time).
package binding
