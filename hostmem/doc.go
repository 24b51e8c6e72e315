// Package hostmem allocates host memory an engine can lend to kvshare:
// page-aligned, outside the Go heap (an anonymous mmap, so the collector
// never moves or frees it under a transfer), described as
// [contract.SlotRegion]s for the geometry the caller gives, with a
// counted hold for each loan of it.
//
// [Map] maps one [Memory]: Regions regions of SlotCount slots of
// SlotBytes each. On request it uses huge pages (2 MiB or 1 GiB) and
// binds the memory to a NUMA node; it always tries to lock it in RAM
// when asked, faults every page in before it returns when asked
// (Options.Prefault), and always marks it MADV_DONTFORK, so a forked
// child never shares or copies lent memory. Each of these is reported
// ([Memory.Report]): what was asked, what was done, and why not — huge
// pages not configured, RLIMIT_MEMLOCK too low, no such node — and a
// mapping that could not get what it asked for still works with what it
// got, saying so.
//
// Each loan takes a hold of its own ([Memory.Hold]) that binding takes:
//
//	hold, err := mem.Hold()
//	binding.Open(ctx, binding.Loan{Regions: mem.Regions(), Hold: hold}, driver, cfg)
//
// and [Memory.Free] is refused (an error wrapping [ErrLent], nothing
// unmapped) while any hold taken is unreleased, that is until every
// borrower confirmed every region unregistered; memory never lent frees
// at once. A hold kept for good ([Hold.KeepForGood], after binding's
// Close answered ErrHeldForGood) refuses Free for good, saying why.
// [Totals] counts what every Memory of the process mapped, locked and
// freed.
//
// It imports only contract and golang.org/x/sys/unix; that package has
// the mmap, madvise, mlock and rlimit calls and constants the standard
// library's syscall package lacks or freezes.
package hostmem
