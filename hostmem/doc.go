// Package hostmem allocates host memory an engine can lend to kvshare:
// page-aligned, outside the Go heap (an anonymous mmap, so the collector
// never moves or frees it under a transfer), described as
// [contract.SlotRegion]s for the geometry the caller gives, and its own
// hold.
//
// [Map] maps one [Memory]: Regions regions of SlotCount slots of
// SlotBytes each. On request it uses huge pages (2 MiB or 1 GiB) and
// binds the memory to a NUMA node; it always tries to lock it in RAM
// when asked, and always marks it MADV_DONTFORK, so a forked child never
// shares or copies lent memory. Each of these is reported
// ([Memory.Report]): what was asked, what was done, and why not — huge
// pages not configured, RLIMIT_MEMLOCK too low, no such node — and a
// mapping that could not get what it asked for still works with what it
// got, saying so.
//
// A Memory is the hold binding takes: lend it with
//
//	binding.Open(ctx, binding.Loan{Regions: mem.Regions(), Hold: mem}, driver, cfg)
//
// and [Memory.Free] is refused (an error wrapping [ErrLent], nothing
// unmapped) until the binding released it, that is until every region is
// confirmed unregistered. A Memory whose hold is kept for good
// ([Memory.KeepForGood], after binding's Close answered ErrHeldForGood)
// refuses Free for good, saying why. [Totals] counts what every Memory
// of the process mapped, locked and freed.
//
// It imports only contract and golang.org/x/sys/unix, which has the
// mmap, madvise, mlock and rlimit calls and constants the standard
// library's syscall package lacks or freezes.
package hostmem
