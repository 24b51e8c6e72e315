// Package broken holds drivers that each break exactly one driver rule of
// package contract, on purpose: the conformance suite must fail each of
// them, and the binding must contain each one it can meet.
//
// # What it owns
//
// [Driver], a [contract.Driver] that wraps a [memdrv.Driver] and behaves
// exactly like it except for the one [Rule] it was built to break. The
// doc comment of each Rule says which rule it breaks and how the
// deviation shows. [Driver.Inner] exposes the wrapped driver, so the
// scenario hooks of memdrv stage what a deviation needs (a held get, an
// unprovable get, a short object). [AllRules] lists every rule; [Rules]
// the first sixteen, as it always did.
//
// # What it promises
//
// The deviation happens whenever its trigger does, deterministically: a
// test that stages the trigger sees it every time (LateOnChangeAfterDrain
// acts a fixed, short time after its trigger; a test waits that long).
// Everything else is memdrv's behaviour. Memory outside registered
// regions is never written, even by the rules that write outside a span
// or after access ended: a stray or late write lands only where a live
// registration of the wrapped driver covers it, so a broken driver can
// corrupt a canary, or memory its lender was told it may reuse, but never
// the process.
//
// # What it refuses
//
// [New] refuses a rule it does not know.
//
// # Decisions
//
//   - Rules keeps returning the first sixteen rules and AllRules returns
//     every one: a consumer with a table that needs an entry for each
//     rule (the binding's containment test) keeps passing when rules are
//     added here, and moves to AllRules when it takes the new ones up.
//   - OnChangeAfterDrain delivers its late callbacks synchronously, in the
//     caller's goroutine, at the start of the next Drain, Unregister or
//     Close after a Drain that returned true, so a test sees them without
//     waiting on time. A caller that holds, around those calls, a lock its
//     callback takes deadlocks there.
//   - UnregisterWhileBusy answers nil for a busy region but keeps it
//     registered in the wrapped driver, and revokes it there after the
//     next Drain that returns true (or at Close). Until then memdrv's
//     ledger counts the registration, so [memdrv.Memory.Free] refuses the
//     memory: the lie never turns into freed memory inside this process.
//   - DrainTrueWhileLive lies only in Drain's answer: the wrapped driver
//     knows the truth, so a Close after the lie is refused, and the live
//     operation still calls its onChange when it ends.
//   - IgnoresCancel declares Cancel whatever the options say. Drain still
//     cancels queued rows: the rule bends Operation.Cancel only.
//   - The rules that bend Poll's statuses (WrongResultCount,
//     ResultsChangeAfterFinal) bend them in the slice Poll returns, which
//     is the caller's dst (memdrv appends to dst[:0]): what the rule
//     remembers between polls (the rows it showed Ready) lives in the
//     operation, never in dst, so a caller that polls into one buffer
//     again and again sees the same deviation as one that passes nil.
//   - GetWritesAfterEnd and PutRereadsAfterEnd act at "the next call": the
//     first call of the driver, or of any of its operations (Poll and
//     Cancel included), after a Poll reported the operation's access
//     Ended. Tying it to a Poll that said so, not to the access end
//     itself, makes the deviation one a caller can always see: the memory
//     is touched only after the caller was told it may reuse it. Each
//     acts once per operation, and only for rows that ended Ready (a get
//     writes back the bytes its spans held when the Poll reported the
//     end; a put stores what its spans hold at the next call).
//   - CancelEndsRunningRow lies from the Cancel on: every later Poll
//     returns the same snapshot (rows not final then read Cancelled,
//     access Ended), so the lie shows as memory touched after access
//     ended, not as a final status that changed. The wrapped row runs on
//     and calls its onChange when it ends.
//   - UnregisterIgnoresQueued answers nil as UnregisterWhileBusy does
//     (the region stays registered in the wrapped driver until no longer
//     busy), but only when every row keeping the region busy is queued:
//     a running row or an Unprovable operation is still counted. It reads
//     the counts from [memdrv.Driver.RowsIn].
//   - The Drain rules lie only in Drain's answer, as DrainTrueWhileLive
//     does, and each only in its case: DrainIgnoresCallbacks when nothing
//     but callbacks keeps the answer false ([memdrv.Driver.Busy] > 0, no
//     operation open or Unprovable); DrainTrueWhenDeadline when the
//     context had time at the call and ended during it;
//     DrainTrueUnprovableWithTime when the context still has time and
//     only Unprovable operations are left. AdmitsAfterFalseDrain does not
//     call the wrapped Drain at all when its answer is false for sure (a
//     context already ended, work running), which is what leaves
//     admission open.
//   - CloseAfterFalseDrain answers nil without closing the wrapped
//     driver, whose Close keeps refusing.
//   - LateOnChangeAfterDrain calls back lateBy (5 ms) after each Drain
//     that returned true, on a timer's goroutine: late enough that a
//     caller looking at once sees nothing, early enough for any wait.
//   - DrainCallbackUnderLock's lock is a channel, not a mutex: in a
//     testing/synctest bubble a goroutine waiting for a channel is
//     durably blocked, so a test can wait for it on a fake clock. Drain
//     calls back, under the lock, after the wrapped Drain returned, for
//     each operation that had a row pending before and has a row
//     Cancelled after (the wrapped driver still delivers its own
//     callbacks for them, outside the lock).
//   - DeviceRefused declares DeviceMemory whatever the options say, like
//     IgnoresCancel declares Cancel, and refuses a Device region before
//     the wrapped driver is asked.
//   - ReadyForAbsent bends every absent key's verdict, Miss or (without
//     AbsentIsMiss) Fault, as [memdrv.RowEnd].Absent tells; SecondPutReady
//     bends only a NotReady that [memdrv.RowEnd].OwnWrite says came from
//     the driver's own put, never another writer's.
//
// # Equivalent mutants
//
// go run mage.go mutate (mutation testing) counts these mutants as
// equivalent, not lived: nothing observable differs, so no test can
// kill them.
//
//   - `afterend.go` in `afterEnd`: `i >= len(o.spans)` (CONDITIONALS_BOUNDARY):
//     the wrapped driver's Poll answers one status a row and o.spans
//     holds one entry a row, so i never reaches len(o.spans); the guard
//     only keeps a miscounted answer from reading past the spans.
//   - `driver.go` in `liesAboutDrain`: `d.inner.Unprovable() > 0` (CONDITIONALS_BOUNDARY):
//     memdrv's Drain answers false with its context still alive only once
//     nothing is open or running and some access is Unprovable, so the
//     count is never 0 where it is read.
//   - `operation.go` in `Poll`: `n > 0` (CONDITIONALS_BOUNDARY): memdrv
//     refuses a batch of no rows, so every Poll has a row to drop.
//   - `rowend.go` in `room`: `addr < r.Base+uintptr(r.Len)` (CONDITIONALS_BOUNDARY):
//     at the region's end the room is 0, which is where best starts.
package broken
