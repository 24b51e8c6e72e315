//go:build linux

package hostmem

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/contract"
)

// Map maps memory of geometry g as o asks, and reports what it got. A bad
// geometry is an error wrapping [ErrGeometry] naming the field; a mapping
// the kernel refuses, [ErrMap]. Huge pages, locking and a NUMA node are
// asked for, never required: without them the memory is used as it is,
// and [Memory.Report] says why.
func Map(g Geometry, o Options) (*Memory, error) {
	regionLen, regions, err := g.check(int64(os.Getpagesize()))
	if err != nil {
		return nil, err
	}
	length := regionLen * int64(regions)
	r := Report{Node: -1}
	mem, pages, why, advised := mapAnon(length, o.HugePages)
	if mem == nil {
		return nil, fmt.Errorf("%w: %d bytes: %s", ErrMap, length, why)
	}
	r.Bytes, r.Pages, r.HugePagesWhy, r.Advised = int64(len(mem)), pages, why, advised
	if err := unix.Madvise(mem, unix.MADV_DONTFORK); err != nil {
		_ = unix.Munmap(mem)
		return nil, fmt.Errorf("%w: madvise(MADV_DONTFORK): %v", ErrMap, err)
	}
	r.DontFork = true
	if o.BindNode {
		if why := bindNode(mem, o.Node); why != "" {
			r.NodeWhy = why
		} else {
			r.Node = o.Node
		}
	}
	if o.Lock {
		if err := unix.Mlock(mem); err != nil {
			r.LockWhy = lockWhy(err, len(mem))
		} else {
			r.Locked = true
		}
	}
	if o.Prefault {
		r.Prefault = prefault(mem)
	}
	m := &Memory{mem: mem, regionLen: regionLen, report: r}
	for i := range regions {
		m.regions = append(m.regions, contract.SlotRegion{
			Base:      base(mem) + uintptr(int64(i)*regionLen),
			SlotBytes: g.SlotBytes,
			SlotCount: g.SlotCount,
			Len:       g.SlotBytes * int64(g.SlotCount),
			Kind:      contract.Host,
		})
	}
	totals.mappedOne(int64(len(mem)), r.Locked)
	return m, nil
}

// mapAnon maps length bytes of anonymous private memory, of huge pages
// when asked and available, else of base pages; it says what it used and
// why huge pages were not, and whether transparent huge pages were
// advised in their place. A nil mapping means even base pages failed;
// why then says how.
func mapAnon(length int64, huge HugePages) (mem []byte, used HugePages, why string, advised bool) {
	const prot = unix.PROT_READ | unix.PROT_WRITE
	const flags = unix.MAP_PRIVATE | unix.MAP_ANONYMOUS
	if size := huge.size(); size > 0 {
		hugeLen := (length + size - 1) / size * size
		sizeFlag := unix.MAP_HUGE_2MB
		if huge == HugePages1GiB {
			sizeFlag = unix.MAP_HUGE_1GB
		}
		b, err := unix.Mmap(-1, 0, int(hugeLen), prot, flags|unix.MAP_HUGETLB|sizeFlag)
		if err == nil {
			return b, huge, "", false
		}
		why = fmt.Sprintf("%v asked: mmap(MAP_HUGETLB): %v; %s", huge, err, hugePool(huge))
		if huge == HugePages2MiB && thpAdvised() {
			b, err := unix.Mmap(-1, 0, int(length), prot, flags)
			if err != nil {
				return nil, NormalPages, err.Error(), false
			}
			if unix.Madvise(b, unix.MADV_HUGEPAGE) == nil {
				why += "; transparent huge pages advised (MADV_HUGEPAGE) instead"
				advised = true
			}
			return b, NormalPages, why, advised
		}
	}
	b, err := unix.Mmap(-1, 0, int(length), prot, flags)
	if err != nil {
		return nil, NormalPages, err.Error(), false
	}
	return b, NormalPages, why, false
}

// prefault writes a zero into every page of mem (all zero already), and
// returns how long that took.
func prefault(mem []byte) time.Duration {
	start := time.Now()
	step := os.Getpagesize()
	for i := 0; i < len(mem); i += step {
		mem[i] = 0
	}
	return time.Since(start)
}

// hugePool says how many huge pages of that size the kernel holds.
func hugePool(huge HugePages) string { return hugePoolIn("/sys/kernel/mm/hugepages", huge) }

// hugePoolIn is hugePool reading the kernel's huge page folder at sysfs.
func hugePoolIn(sysfs string, huge HugePages) string {
	dir := "hugepages-2048kB"
	if huge == HugePages1GiB {
		dir = "hugepages-1048576kB"
	}
	file := sysfs + "/" + dir + "/nr_hugepages"
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return "this system has no " + huge.String()
	}
	if err != nil {
		return "cannot read " + file + ": " + err.Error()
	}
	return fmt.Sprintf("%s is %s (set it, or vm.nr_hugepages, to reserve them)", file, strings.TrimSpace(string(data)))
}

// thpAdvised reports whether transparent huge pages are on for memory
// advised MADV_HUGEPAGE (mode "always" or "madvise").
func thpAdvised() bool {
	data, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && (strings.Contains(string(data), "[always]") || strings.Contains(string(data), "[madvise]"))
}

// lockWhy says why mlock failed, with the limit that refused it.
func lockWhy(err error, n int) string {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_MEMLOCK, &lim) == nil && lim.Cur != unix.RLIM_INFINITY {
		return fmt.Sprintf("mlock: %v; RLIMIT_MEMLOCK is %s, the mapping %s (raise it: ulimit -l, or LimitMEMLOCK= for a service)",
			err, size(int64(lim.Cur)), size(int64(n)))
	}
	return "mlock: " + err.Error()
}

// bindNode binds the memory to one NUMA node (mbind MPOL_BIND) and says
// why it did not, or "".
func bindNode(mem []byte, node int) string {
	if node < 0 || node >= 1024 {
		return fmt.Sprintf("node %d out of range", node)
	}
	if _, err := os.Stat(fmt.Sprintf("/sys/devices/system/node/node%d", node)); err != nil {
		return fmt.Sprintf("this system has no NUMA node %d", node)
	}
	const mpolBind = 2
	mask := make([]uint64, node/64+1)
	mask[node/64] |= 1 << (node % 64)
	_, _, errno := unix.Syscall6(unix.SYS_MBIND, base(mem), uintptr(len(mem)), mpolBind,
		uintptr(unsafe.Pointer(&mask[0])), uintptr(len(mask)*64+1), 0)
	if errno != 0 {
		return "mbind: " + errno.Error()
	}
	return ""
}

func unmap(b []byte) error { return unix.Munmap(b) }
