package storeconfig

import "slices"

// Memory is the [memory] section: the settings of the embedded
// in-memory store, a bounded cache whose capacity is taken up front
// outside the Go heap (module memdrv's bounded store). A store file
// that holds it, and neither [mooncake] nor [redis], is for that store;
// every store-file reader knows the section and checks it.
type Memory struct {
	// Capacity (capacity, required) is the bytes the store takes up
	// front, from 0 (a store that holds nothing: every put Declined) to
	// MaxMemoryCapacity.
	Capacity int64
	// ChunkBytes (chunk_bytes) is the size of the store's chunks: an
	// object takes its size rounded up to whole chunks. 0 (left out)
	// means DefaultChunkBytes; else a multiple of
	// MinChunkBytes from MinChunkBytes to MaxChunkBytes, at most the
	// capacity, and at most MaxChunks chunks in the capacity. A divisor of every row size the node stores wastes
	// nothing.
	ChunkBytes int64
	// HugePages (huge_pages) asks for huge pages: "none" (left out),
	// "2MiB" or "1GiB"; without them the store uses base pages and says
	// so.
	HugePages string
	// Lock (lock) asks for the memory to be locked in RAM (best effort,
	// said so).
	Lock bool
	// Workers (workers) is the worker goroutines of each driver over the
	// store, from 1 to MaxMemoryWorkers; 0 (left out) means
	// DefaultMemoryWorkers.
	Workers int
}

// The keys of the [memory] section, as a file spells them.
const (
	MemorySection = "memory"
	KeyCapacity   = "capacity"
	KeyChunkBytes = "chunk_bytes"
	KeyHugePages  = "huge_pages"
	KeyLock       = "lock"
	KeyWorkers    = "workers"
)

// MemoryKeys lists the keys of the [memory] section.
var MemoryKeys = []string{KeyCapacity, KeyChunkBytes, KeyHugePages, KeyLock, KeyWorkers}

// The values of huge_pages.
const (
	HugePagesNone = "none"
	HugePages2MiB = "2MiB"
	HugePages1GiB = "1GiB"
)

// HugePageSizes lists the values huge_pages takes.
var HugePageSizes = []string{HugePagesNone, HugePages2MiB, HugePages1GiB}

// The ranges and defaults of the [memory] section (the chunk bounds are
// the bounded store's own).
const (
	MaxMemoryCapacity    = 1 << 46 // 64 TiB
	MinChunkBytes        = 64
	MaxChunkBytes        = 1 << 30
	DefaultChunkBytes    = 64 << 10
	MaxChunks            = 1<<31 - 1
	MaxMemoryWorkers     = 1024
	DefaultMemoryWorkers = 2
)

// WithDefaults returns m with an empty HugePages made "none" and Workers
// 0 made DefaultMemoryWorkers.
func (m Memory) WithDefaults() Memory {
	if m.HugePages == "" {
		m.HugePages = HugePagesNone
	}
	if m.Workers == 0 {
		m.Workers = DefaultMemoryWorkers
	}
	return m
}

// Validate checks m's values (the defaults filled in): each refusal an
// [*Error] naming the section and key (file: the file, or "" for
// settings built in code); several are joined.
func (m Memory) Validate(file string) error { return m.Check(file).Err() }

// Check is Validate's refusals, one by one.
func (m Memory) Check(file string) Findings {
	m = m.WithDefaults()
	var errs Findings
	errs.InRange(file, MemorySection, KeyCapacity, m.Capacity, 0, MaxMemoryCapacity)
	switch c := m.ChunkBytes; {
	case c == 0:
	case c < MinChunkBytes || c > MaxChunkBytes || c%MinChunkBytes != 0:
		errs.Addf(file, MemorySection, KeyChunkBytes, "must be a multiple of %d from %d to %d (or left out: 65536), got %d",
			MinChunkBytes, MinChunkBytes, MaxChunkBytes, c)
	case m.Capacity > 0 && c > m.Capacity:
		errs.Addf(file, MemorySection, KeyChunkBytes, "is %d, larger than the capacity (%d): the store would hold no chunk", c, m.Capacity)
	}
	chunk := m.ChunkBytes
	if chunk == 0 {
		chunk = DefaultChunkBytes
	}
	if chunk >= MinChunkBytes && m.Capacity/chunk > MaxChunks {
		errs.Addf(file, MemorySection, KeyCapacity, "is %d chunks of %d bytes, want at most %d (a larger chunk_bytes)", m.Capacity/chunk, chunk, MaxChunks)
	}
	if !slices.Contains(HugePageSizes, m.HugePages) {
		errs.Addf(file, MemorySection, KeyHugePages, "must be one of %q, %q, %q, got %q", HugePagesNone, HugePages2MiB, HugePages1GiB, m.HugePages)
	}
	errs.InRangeOrDefault(file, MemorySection, KeyWorkers, int64(m.Workers), MaxMemoryWorkers, DefaultMemoryWorkers)
	return errs
}
