package memdrv

import (
	"errors"
	"sync"

	"github.com/kvshare/kvshare/contract"
)

// ErrMemoryLent is wrapped by a [Memory.Free] refused because a
// registration of a memdrv driver still covers the memory: a store may
// still touch it, so it stays mapped.
var ErrMemoryLent = errors.New("memdrv: memory still lent")

// ledger is the process's record of the mappings [Alloc] made and not
// yet unmapped, each with the number of live memdrv registrations that
// cover any byte of it. One mutex guards it and every Memory's mapping,
// so a registration and a Free never cross.
var ledger = struct {
	mu   sync.Mutex
	lent map[*Memory]int // mapped memory → registrations covering it
}{lent: make(map[*Memory]int)}

// record enters a fresh mapping in the ledger, lent to no one.
func record(m *Memory) {
	ledger.mu.Lock()
	defer ledger.mu.Unlock()
	ledger.lent[m] = 0
}

// lend counts one more registration against every mapped Memory that
// one of rs overlaps, and returns those memories (once per overlap) for
// [settle] to give back when the registration is revoked. Memory that
// Alloc did not map is not in the ledger and is not counted.
func lend(rs []contract.SlotRegion) []*Memory {
	ledger.mu.Lock()
	defer ledger.mu.Unlock()
	var pinned []*Memory
	for _, r := range rs {
		lo, hi := r.Base, r.Base+uintptr(r.Len)
		for m := range ledger.lent {
			mlo := m.Region.Base
			if mlo < hi && mlo+uintptr(m.Region.Len) > lo {
				ledger.lent[m]++
				pinned = append(pinned, m)
			}
		}
	}
	return pinned
}

// giveBack returns what lend counted for one revoked registration.
func giveBack(pinned []*Memory) {
	ledger.mu.Lock()
	defer ledger.mu.Unlock()
	for _, m := range pinned {
		ledger.lent[m]--
	}
}
