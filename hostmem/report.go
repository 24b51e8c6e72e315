package hostmem

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

// Report says what a mapping asked for and what it got; a request not
// met says why in its Why field.
type Report struct {
	// Bytes is the size of the mapping (the regions rounded up to whole
	// pages).
	Bytes int64
	// Pages is what the mapping uses; HugePagesWhy, when huge pages were
	// asked and not given, says why.
	Pages        HugePages
	HugePagesWhy string
	// Advised says 2 MiB huge pages were asked, the kernel's pool had
	// none, and transparent huge pages were advised (MADV_HUGEPAGE)
	// instead: Pages says base pages, though the kernel may back the
	// memory with transparent huge pages.
	Advised bool
	// Prefault is how long writing every page once took, when
	// Options.Prefault asked for it; 0 otherwise.
	Prefault time.Duration
	// Locked says mlock succeeded; LockWhy, when it was asked and did
	// not, says why (RLIMIT_MEMLOCK named). Huge pages are never swapped
	// out, locked or not (the kernel then marks nothing locked).
	Locked  bool
	LockWhy string
	// DontFork says MADV_DONTFORK took (always asked).
	DontFork bool
	// Node is the NUMA node the memory is bound to, or -1; NodeWhy, when
	// a node was asked and not bound, says why.
	Node    int
	NodeWhy string
}

// String reads as one line: "64 MiB, base pages (2 MiB huge pages
// asked: none configured …), locked, not shared with forked children".
func (r Report) String() string {
	parts := []string{size(r.Bytes) + ", " + r.Pages.String()}
	if r.HugePagesWhy != "" {
		parts[0] += " (" + r.HugePagesWhy + ")"
	}
	switch {
	case r.Locked:
		parts = append(parts, "locked in RAM")
	case r.LockWhy != "":
		parts = append(parts, "not locked ("+r.LockWhy+")")
	}
	switch {
	case r.Node >= 0:
		parts = append(parts, fmt.Sprintf("bound to NUMA node %d", r.Node))
	case r.NodeWhy != "":
		parts = append(parts, "not bound to a NUMA node ("+r.NodeWhy+")")
	}
	if r.DontFork {
		parts = append(parts, "not shared with forked children")
	}
	if r.Prefault > 0 {
		parts = append(parts, "faulted in in "+r.Prefault.Round(time.Millisecond).String())
	}
	return strings.Join(parts, ", ")
}

// Counts are the bytes every Memory of the process mapped, locked and
// freed, since the process started.
type Counts struct {
	Maps, Frees           int64
	Mapped, Locked, Freed int64 // bytes
	MappedNow, LockedNow  int64 // bytes mapped (locked) and not freed
}

// counter adds up [Counts] with atomics.
type counter struct {
	maps, frees, mapped, locked, freedBytes, unlocked atomic.Int64
}

var totals counter

func (c *counter) mappedOne(n int64, locked bool) {
	c.maps.Add(1)
	c.mapped.Add(n)
	if locked {
		c.locked.Add(n)
	}
}

func (c *counter) freedOne(n int64, locked bool) {
	c.frees.Add(1)
	c.freedBytes.Add(n)
	if locked {
		c.unlocked.Add(n)
	}
}

// Totals returns the counts of every Memory of the process.
func Totals() Counts {
	n := Counts{
		Maps: totals.maps.Load(), Frees: totals.frees.Load(),
		Mapped: totals.mapped.Load(), Locked: totals.locked.Load(), Freed: totals.freedBytes.Load(),
	}
	n.MappedNow = n.Mapped - n.Freed
	n.LockedNow = n.Locked - totals.unlocked.Load()
	return n
}

// size writes n bytes in binary units.
func size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}
