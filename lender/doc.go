// Package lender lends an engine's staging memory to a kvshare backend
// in one call, and gives it all back in one.
//
// [Lend] maps host memory outside the Go heap (package hostmem) in the
// geometry asked, takes the loan's hold and opens a backend (package
// binding) over the driver it is given; [Open] does the same over a
// driver a function opens once the memory is mapped. Either owns the
// driver from its first line: on any failure the driver is drained and
// closed and the memory freed, and what cannot be proven free (a
// registration that may be live) is kept for the life of the process
// and reported as a [*Kept].
//
// A [Lender] is the backend (Publish, Fetch, Lookup, Stats, Reclaim…)
// with the memory beside it: [Lender.Slot] is the bytes of a slot by
// index. [Lender.Close] gives back everything it can in the owner's
// order — closes the backend and the driver, reclaims the calls held
// as unprovable when the driver can recycle, then frees the memory — and
// returns nil, a [*Kept] saying what it kept for good and why, or the
// context's error when time ran out (call Close again).
//
// It imports binding, hostmem and contract, never a driver: the caller
// picks the store.
package lender
