package conformance

import (
	"fmt"
	"hash/fnv"
	"os"
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
type arena struct {
	label  string
	mem    []byte // the whole mapping
	off    int    // offset of the region in mem
	region contract.SlotRegion
	freed  bool
	keep   string // why the memory must stay mapped whatever else happens, or ""
}

// mapArena maps an arena for a region of slots slots of slotBytes each.
func mapArena(label string, slotBytes int64, slots int, kind contract.MemoryKind) (*arena, error) {
	page := int64(os.Getpagesize())
	body := slotBytes * int64(slots)
	size := page + (body+page-1)/page*page + page
	mem, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("conformance: mapping %d bytes for region %s: %w", size, label, err)
	}
	a := &arena{label: label, mem: mem, off: int(page)}
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

// free unmaps the arena. Only the bench's teardown calls it, on proof.
func (a *arena) free() error {
	if a.freed {
		return nil
	}
	a.freed = true
	return syscall.Munmap(a.mem)
}

// canary is the pattern byte at offset i of a mapping: it depends on the
// offset, so a copy of one part of the mapping into another shows too.
func canary(i int) byte { return byte(uint32(i) * 0x9E3779B1 >> 24) }

// paint fills the whole mapping with the canary pattern.
func (a *arena) paint() {
	for i := range a.mem {
		a.mem[i] = canary(i)
	}
}

// slot returns the bytes of slot i.
func (a *arena) slot(i int) []byte {
	n := int(a.region.SlotBytes)
	return a.mem[a.off+i*n : a.off+(i+1)*n]
}

// span returns the span of slot i.
func (a *arena) span(i int) contract.Span { return a.region.Slot(i) }

// spanAt returns the span of n bytes at offset off of the region; off
// may be negative and off+n may pass the region's end (inside the guard
// pages), for extent checks.
func (a *arena) spanAt(off, n int64) contract.Span {
	return contract.Span{Addr: uintptr(int64(a.region.Base) + off), Len: n}
}

// bytesOf returns the bytes behind a span lying inside the mapping.
func (a *arena) bytesOf(s contract.Span) []byte {
	start := int(s.Addr-a.region.Base) + a.off
	return a.mem[start : start+int(s.Len)]
}

// owns reports whether any byte of s lies in the mapping.
func (a *arena) owns(s contract.Span) bool {
	lo := uintptr(unsafe.Pointer(&a.mem[0]))
	hi := lo + uintptr(len(a.mem))
	return s.Len > 0 && s.Addr < hi && s.Addr+uintptr(s.Len) > lo
}

// fill writes data at the start of slot i.
func (a *arena) fill(i int, data []byte) { copy(a.slot(i), data) }

// repaint puts the canary pattern back over a span.
func (a *arena) repaint(s contract.Span) {
	start := int(s.Addr-a.region.Base) + a.off
	for i := start; i < start+int(s.Len); i++ {
		a.mem[i] = canary(i)
	}
}

// stray returns the offset, relative to the region's base, of the first
// byte outside the spans in skip that no longer holds the canary, and
// false if there is none. Offsets below zero or past the region's Len lie
// in the guard pages.
func (a *arena) stray(skip ...contract.Span) (int64, bool) {
	for i := range a.mem {
		if a.mem[i] == canary(i) {
			continue
		}
		addr := uintptr(unsafe.Pointer(&a.mem[0])) + uintptr(i)
		inside := false
		for _, s := range skip {
			if addr >= s.Addr && addr < s.End() {
				inside = true
				break
			}
		}
		if !inside {
			return int64(i - a.off), true
		}
	}
	return 0, false
}

// payload returns n bytes of data that depend on key, so that two keys'
// objects never match by accident and neither matches the canary.
func payload(key string, n int) []byte {
	h := fnv.New64a()
	h.Write([]byte(key))
	x := h.Sum64() | 1
	out := make([]byte, n)
	for i := range out {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		out[i] = byte(x)
	}
	return out
}

// firstDiff returns the first offset at which got and want differ, and
// false if they are equal.
func firstDiff(got, want []byte) (int, bool) {
	n := min(len(got), len(want))
	for i := range n {
		if got[i] != want[i] {
			return i, true
		}
	}
	if len(got) != len(want) {
		return n, true
	}
	return 0, false
}
