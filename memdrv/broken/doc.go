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
// unprovable get, a short object).
//
// # What it promises
//
// The deviation happens whenever its trigger does, deterministically: a
// test that stages the trigger sees it every time. Everything else is
// memdrv's behaviour. Memory outside registered regions is never
// written, even by the rules that write outside a span: a stray write
// lands only where a live registration covers it, so a broken driver can
// corrupt a canary but never the process.
//
// # What it refuses
//
// [New] refuses a rule it does not know.
//
// # Decisions
//
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
package broken
