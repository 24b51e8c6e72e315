package conformance

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"os"
	"slices"
	"sync"
	"syscall"
	"unsafe"

	"github.com/kvshare/kvshare/contract"
)

// arena is memory the suite lends a driver: an anonymous mapping outside
// the Go heap holding one region, with a guard page on either side. The
// whole mapping is filled with a canary pattern, so that a write outside
// the spans a check hands the driver shows, even one byte before or past
// the region, without the driver touching memory the suite does not own.
//
// An arena is unmapped only when the bench can prove no driver can touch
// it any more; otherwise it stays mapped for the life of the process.
//
// mu (the bench's memory lock) guards the memory as the suite reads and
// writes it, the seals, and freed: an onChange call may seal spans from
// any goroutine. The methods here that are not marked Locked take it.
type arena struct {
	mu     *sync.Mutex
	label  string
	mem    []byte // the whole mapping
	off    int    // offset of the region in mem
	region contract.SlotRegion
	freed  bool
	keep   string  // why the memory must stay mapped whatever else happens, or ""
	seals  []*seal // spans watched since their operation's access ended
}

// mapArena maps an arena for a region of slots slots of slotBytes each.
func mapArena(mu *sync.Mutex, label string, slotBytes int64, slots int, kind contract.MemoryKind) (*arena, error) {
	page := int64(os.Getpagesize())
	body := slotBytes * int64(slots)
	size := page + (body+page-1)/page*page + page
	mem, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("conformance: mapping %d bytes for region %s: %w", size, label, err)
	}
	a := &arena{mu: mu, label: label, mem: mem, off: int(page)}
	a.region = contract.SlotRegion{
		Base:      uintptr(unsafe.Pointer(&mem[a.off])),
		SlotBytes: slotBytes,
		SlotCount: slots,
		Len:       body,
		Kind:      kind,
	}
	a.paint()
	return a, nil
}

// free unmaps the arena. Only the end of the run calls it, on the
// teardown's proof.
func (a *arena) free() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.freed {
		return nil
	}
	a.freed = true
	return syscall.Munmap(a.mem)
}

// canary is the pattern byte at offset i of a mapping: it depends on the
// offset, so a copy of one part of the mapping into another shows too.
func canary(i int) byte { return byte(uint32(i) * 0x9E3779B1 >> 24) }

// canaries holds the canary pattern of offsets 0, 1, … as far as any
// mapping has needed it, so that painting and comparing work on whole
// runs of bytes (bytes.Equal, copy) rather than byte by byte.
var canaries struct {
	mu  sync.Mutex
	pat []byte
}

// canaryPattern returns the canary pattern of offsets 0 to n-1. The
// slice is shared: read it, never write it.
func canaryPattern(n int) []byte {
	canaries.mu.Lock()
	defer canaries.mu.Unlock()
	for i := len(canaries.pat); i < n; i++ {
		canaries.pat = append(canaries.pat, canary(i))
	}
	return canaries.pat[:n:n]
}

// paint fills the whole mapping with the canary pattern.
func (a *arena) paint() { copy(a.mem, canaryPattern(len(a.mem))) }

// slot returns a copy of the bytes of slot i, as the suite sees them
// (see view).
func (a *arena) slot(i int) []byte { return a.bytesOf(a.span(i)) }

// span returns the span of slot i.
func (a *arena) span(i int) contract.Span { return a.region.Slot(i) }

// spanAt returns the span of n bytes at offset off of the region; off
// may be negative and off+n may pass the region's end (inside the guard
// pages), for extent checks.
func (a *arena) spanAt(off, n int64) contract.Span {
	return contract.Span{Addr: uintptr(int64(a.region.Base) + off), Len: n}
}

// offsetOf returns the offset in the mapping of a span lying inside it.
func (a *arena) offsetOf(s contract.Span) int { return int(s.Addr-a.region.Base) + a.off }

// bytesOf returns a copy of the bytes behind a span lying inside the
// mapping, as the suite sees them (see viewLocked).
func (a *arena) bytesOf(s contract.Span) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	start := a.offsetOf(s)
	return a.viewLocked(start, start+int(s.Len))
}

// viewLocked returns a copy of offsets lo to hi of the mapping as the
// suite sees them: in a span sealed since its operation's access ended,
// what the span held then (the memory itself holds the seal's mark);
// elsewhere the memory's bytes. The caller holds a.mu.
func (a *arena) viewLocked(lo, hi int) []byte {
	out := bytes.Clone(a.mem[lo:hi])
	for _, sl := range a.seals {
		from, to := max(lo, sl.off), min(hi, sl.off+len(sl.left))
		if from < to {
			copy(out[from-lo:to-lo], sl.left[from-sl.off:to-sl.off])
		}
	}
	return out
}

// owns reports whether any byte of s lies in the mapping.
func (a *arena) owns(s contract.Span) bool {
	lo := uintptr(unsafe.Pointer(&a.mem[0]))
	hi := lo + uintptr(len(a.mem))
	return s.Len > 0 && s.Addr < hi && s.Addr+uintptr(s.Len) > lo
}

// holds reports whether every byte of s lies in the mapping.
func (a *arena) holds(s contract.Span) bool {
	lo := uintptr(unsafe.Pointer(&a.mem[0]))
	hi := lo + uintptr(len(a.mem))
	return s.Len > 0 && s.Addr >= lo && s.Addr < hi && uint64(s.Len) <= uint64(hi-s.Addr)
}

// repaint puts the canary pattern back over a span, in the suite's view:
// a sealed span keeps its mark in memory (it is still watched) and reads
// as canary from now on.
func (a *arena) repaint(s contract.Span) {
	a.mu.Lock()
	defer a.mu.Unlock()
	lo := a.offsetOf(s)
	hi := lo + int(s.Len)
	pat := canaryPattern(hi)
	copy(a.mem[lo:hi], pat[lo:hi])
	for _, sl := range a.seals {
		from, to := max(lo, sl.off), min(hi, sl.off+len(sl.left))
		if from < to {
			copy(sl.left[from-sl.off:to-sl.off], pat[from:to])
			copy(a.mem[from:to], sl.mark[from-sl.off:to-sl.off])
		}
	}
}

// stray returns the offset, relative to the region's base, of the first
// byte outside the spans in skip that no longer holds the canary (as the
// suite sees it), and false if there is none. Offsets below zero or past
// the region's Len lie in the guard pages.
func (a *arena) stray(skip ...contract.Span) (int64, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.freed {
		return 0, false
	}
	view := a.viewLocked(0, len(a.mem))
	pat := canaryPattern(len(view))
	base := uintptr(unsafe.Pointer(&a.mem[0]))
	type gap struct{ lo, hi int }
	var holes []gap // the skipped spans, as offsets of the mapping
	for _, s := range skip {
		if !a.owns(s) {
			continue
		}
		lo := max(0, int(int64(s.Addr)-int64(base)))
		holes = append(holes, gap{lo, min(len(view), lo+int(s.Len))})
	}
	slices.SortFunc(holes, func(x, y gap) int { return x.lo - y.lo })
	at := 0
	for _, h := range append(holes, gap{len(view), len(view)}) {
		if at < h.lo {
			if i, bad := firstDiff(view[at:h.lo], pat[at:h.lo]); bad {
				return int64(at + i - a.off), true
			}
		}
		at = max(at, h.hi)
	}
	return 0, false
}

// payload returns n bytes of data that depend on key, so that two keys'
// objects never match by accident and neither matches the canary.
//
// Byte i is the low byte of step i+1 of a xorshift generator seeded by
// the key's hash. The bytes are made eight at a time into words, laid
// out in memory in step order: the suite runs under the race detector,
// which watches every store, and a word is one store where eight bytes
// are eight.
func payload(key string, n int) []byte {
	h := fnv.New64a()
	h.Write([]byte(key))
	x := h.Sum64() | 1
	if n == 0 {
		return []byte{}
	}
	words := make([]uint64, (n+7)/8)
	for j := range words {
		var w uint64
		for k := range 8 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			w |= (x & 0xff) << byteShift[k]
		}
		words[j] = w
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
}

// byteShift is, for each byte of a word in memory order, the shift that
// puts a byte there: 0, 8, … on a little-endian machine, 56, 48, … on a
// big-endian one.
var byteShift = func() (s [8]uint) {
	one := uint64(1)
	little := *(*byte)(unsafe.Pointer(&one)) == 1
	for k := range s {
		s[k] = uint(8 * k)
		if !little {
			s[k] = uint(56 - 8*k)
		}
	}
	return s
}()

// firstDiff returns the first offset at which got and want differ, and
// false if they are equal.
func firstDiff(got, want []byte) (int, bool) {
	if bytes.Equal(got, want) {
		return 0, false
	}
	n := min(len(got), len(want))
	for i := range n {
		if got[i] != want[i] {
			return i, true
		}
	}
	return n, true
}

// fill writes data at the start of slot i, for an operation the suite is
// about to submit (see write).
func (b *bench) fill(a *arena, i int, data []byte) {
	b.r.Helper()
	b.write(a, contract.Span{Addr: a.span(i).Addr, Len: int64(len(data))}, data)
}

// write writes data over s, which a holds: memory the suite takes back
// for another operation. Seals over it are given up first, each looked
// at one last time.
func (b *bench) write(a *arena, s contract.Span, data []byte) {
	b.r.Helper()
	b.retireSpan(s)
	a.mu.Lock()
	defer a.mu.Unlock()
	copy(a.mem[a.offsetOf(s):a.offsetOf(s)+int(s.Len)], data)
}

// describeSpan names a span of a for findings: "slot 3 of region r2"
// when it is a whole slot, else its offset and length in the region.
func (a *arena) describeSpan(s contract.Span) string {
	off := int64(s.Addr - a.region.Base)
	if s.Len == a.region.SlotBytes && off%a.region.SlotBytes == 0 {
		return fmt.Sprintf("slot %d of region %s", off/a.region.SlotBytes, a.label)
	}
	return fmt.Sprintf("bytes %d to %d of region %s", off, off+s.Len, a.label)
}
