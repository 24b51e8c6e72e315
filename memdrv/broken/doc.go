// Package broken holds drivers that each break exactly one driver rule of
// package contract, on purpose: the conformance suite must fail each of
// them, and the binding must contain each one it can meet.
//
// [Driver] is a [contract.Driver] that wraps a [memdrv.Driver] and
// behaves exactly like it except for the one [Rule] it was built to
// break; the doc comment of each Rule says which rule it breaks and how
// the deviation shows. Like memdrv's, it implements [contract.Looker]
// and [contract.Recycler]: its Lookup and Recycle are memdrv's, bent
// only by the lookup and the recycle rules. [Driver.Inner] exposes the
// wrapped driver, so the
// scenario hooks of memdrv stage what a deviation needs (a held get, an
// unprovable get, a short object). [AllRules] lists every rule; [Rules]
// the first sixteen, as it always did.
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
// [New] refuses a rule it does not know. [NewTogether] builds the same
// drivers registering batches of regions too ([contract.RegionsTogether]),
// which the rules of batches ([Rule.Together]) need to show.
//
// How each rule behaves where the rule's comment leaves a choice (when
// late callbacks arrive, what a lying Unregister keeps registered, when
// a write after the end happens): docs/design/memdrv.md (section
// "Deliberately broken drivers (memdrv/broken)").
package broken
