package hostmem

// HugePages says which page size Map asks the kernel for.
type HugePages uint8

const (
	// NormalPages: the system's base pages (4 KiB on x86-64).
	NormalPages HugePages = iota
	// HugePages2MiB: 2 MiB huge pages from the kernel's hugetlb pool
	// (vm.nr_hugepages); without them, base pages, said so.
	HugePages2MiB
	// HugePages1GiB: 1 GiB huge pages where the system has them; without
	// them, base pages, said so.
	HugePages1GiB
)

// String names the page size: "4 KiB pages", "2 MiB huge pages", ….
func (h HugePages) String() string {
	switch h {
	case HugePages2MiB:
		return "2 MiB huge pages"
	case HugePages1GiB:
		return "1 GiB huge pages"
	}
	return "base pages"
}

// size is the page size h asks for, 0 for base pages.
func (h HugePages) size() int64 {
	switch h {
	case HugePages2MiB:
		return 2 << 20
	case HugePages1GiB:
		return 1 << 30
	}
	return 0
}

// Options say how Map maps. The zero value maps base pages, unlocked, on
// no particular NUMA node (always with MADV_DONTFORK).
type Options struct {
	// HugePages asks for huge pages.
	HugePages HugePages
	// Lock asks for mlock: the memory stays in RAM, never swapped out.
	// Best effort: a refusal (RLIMIT_MEMLOCK) is reported, and the memory
	// is used unlocked.
	Lock bool
	// BindNode, when set, binds the memory to NUMA node Node (mbind,
	// MPOL_BIND); a refusal is reported and the memory used unbound.
	BindNode bool
	Node     int
	// Prefault writes every page once before Map returns, so that the
	// first use of the memory pays no page fault: not the kernel's (the
	// page is allocated and mapped) nor a hypervisor's (under some
	// virtual machines the first access from user space faults again,
	// even after MAP_POPULATE or mlock). The time it took is reported
	// (Report.Prefault). The memory is zero either way.
	Prefault bool
}
