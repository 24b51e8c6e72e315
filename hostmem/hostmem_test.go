package hostmem

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/contract"
)

func TestGeometryRefusalsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    Geometry
		want string
	}{
		{"no slot bytes", Geometry{SlotCount: 4}, "Geometry.SlotBytes is 0, want at least 1"},
		{"negative slot bytes", Geometry{SlotBytes: -1, SlotCount: 4}, "Geometry.SlotBytes is -1"},
		{"no slots", Geometry{SlotBytes: 4096}, "Geometry.SlotCount is 0, want at least 1"},
		{"negative regions", Geometry{SlotBytes: 4096, SlotCount: 1, Regions: -2}, "Geometry.Regions is -2"},
		{"a region that overflows", Geometry{SlotBytes: 1 << 62, SlotCount: 4}, "overflows"},
		{"regions that overflow", Geometry{SlotBytes: 1 << 40, SlotCount: 1 << 20, Regions: 1 << 10}, "overflows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := Totals()
			m, err := Map(tc.g, Options{})
			require.ErrorIs(t, err, ErrGeometry)
			assert.ErrorContains(t, err, tc.want)
			assert.Nil(t, m)
			assert.Equal(t, before.Maps, Totals().Maps, "nothing mapped")
		})
	}
}

func TestMapLaysOutRegionsOfSlots(t *testing.T) {
	before := Totals()
	m, err := Map(Geometry{SlotBytes: 3000, SlotCount: 5, Regions: 3}, Options{})
	require.NoError(t, err)
	page := uintptr(os.Getpagesize())
	regions := m.Regions()
	require.Len(t, regions, 3)
	for i, r := range regions {
		require.NoError(t, r.Validate(), "region %d", i)
		assert.Equal(t, contract.Host, r.Kind)
		assert.EqualValues(t, 3000, r.SlotBytes)
		assert.Equal(t, 5, r.SlotCount)
		assert.EqualValues(t, 15000, r.Len)
		assert.Zero(t, r.Base%page, "region %d is page-aligned", i)
		if i > 0 {
			assert.GreaterOrEqual(t, r.Base, regions[i-1].Base+uintptr(regions[i-1].Len), "regions do not overlap")
		}
		for s := range r.SlotCount {
			slot := m.Slot(i, s)
			require.Len(t, slot, 3000)
			assert.Equal(t, r.Base+uintptr(s*3000), base(slot))
			slot[0], slot[len(slot)-1] = byte(i), byte(s)
		}
	}
	assert.Panics(t, func() { m.Slot(0, 5) })
	whole := m.Bytes(1)
	assert.Equal(t, regions[1].Base, base(whole))
	assert.Len(t, whole, int(page)*int((15000+page-1)/page), "a region's slots and its padding to the last page")
	assert.Panics(t, func() { m.Bytes(3) })
	rep := m.Report()
	assert.True(t, rep.DontFork)
	assert.Equal(t, NormalPages, rep.Pages)
	assert.Equal(t, -1, rep.Node)
	assert.False(t, rep.Locked)
	assert.Empty(t, rep.LockWhy, "not asked")
	assert.True(t, vmFlags(t, regions[0].Base)["dc"], "MADV_DONTFORK: a forked child never shares or copies it")
	assert.Equal(t, before.Maps+1, Totals().Maps)
	assert.Equal(t, before.Mapped+rep.Bytes, Totals().Mapped)

	require.NoError(t, m.Free(), "never lent: freed at once")
	require.NoError(t, m.Free(), "freeing freed memory does nothing")
	assert.Equal(t, before.Frees+1, Totals().Frees)
	assert.Equal(t, before.MappedNow, Totals().MappedNow)
	assert.Panics(t, func() { m.Slot(0, 0) }, "no slot of freed memory")
}

// Each loan takes its own hold: Free is refused while any hold taken is
// not released, counting them, and allowed once every one is (a second
// Release of one hold counts once); freed memory gives no hold.
func TestFreeWaitsForEveryHold(t *testing.T) {
	m, err := Map(Geometry{SlotBytes: 4096, SlotCount: 2}, Options{})
	require.NoError(t, err)
	first, err := m.Hold()
	require.NoError(t, err)
	second, err := m.Hold()
	require.NoError(t, err)
	err = m.Free()
	require.ErrorIs(t, err, ErrLent)
	assert.ErrorContains(t, err, "2 of 2 holds not released")
	m.Slot(0, 1)[0] = 1 // still mapped

	first.Release()
	first.Release()
	assert.True(t, first.Released())
	assert.False(t, second.Released())
	err = m.Free()
	require.ErrorIs(t, err, ErrLent, "the second loan still holds it")
	assert.ErrorContains(t, err, "1 of 2 holds not released")
	m.Slot(0, 1)[0] = 2

	second.Release()
	require.NoError(t, m.Free())
	_, err = m.Hold()
	require.ErrorIs(t, err, ErrFreed)
}

// A hold kept for good refuses Free for good, naming why, even after a
// release and whatever the other holds do.
func TestAHoldKeptForGood(t *testing.T) {
	m, err := Map(Geometry{SlotBytes: 4096, SlotCount: 2}, Options{})
	require.NoError(t, err)
	kept, err := m.Hold()
	require.NoError(t, err)
	other, err := m.Hold()
	require.NoError(t, err)

	held := errors.New("kvshare/binding: held for good")
	kept.KeepForGood(held)
	kept.KeepForGood(errors.New("a later reason")) // the first is kept
	kept.Release()                                 // even a release after that
	other.Release()
	err = m.Free()
	require.ErrorIs(t, err, ErrLent)
	assert.ErrorContains(t, err, "kept for good (kvshare/binding: held for good)")
	m.Slot(0, 1)[0] = 2 // still mapped, for good
	_, err = m.Hold()
	require.NoError(t, err, "still mapped: it may be lent again")
}

// Holds taken and released from many goroutines at once are all counted:
// Free refuses until the last is released.
func TestHoldsFromManyGoroutines(t *testing.T) {
	m, err := Map(Geometry{SlotBytes: 4096, SlotCount: 1}, Options{})
	require.NoError(t, err)
	const loans = 32
	holds := make(chan *Hold, loans)
	var wg sync.WaitGroup
	for range loans {
		wg.Go(func() {
			h, err := m.Hold()
			assert.NoError(t, err)
			holds <- h
		})
	}
	wg.Wait()
	close(holds)
	last := <-holds
	for h := range holds {
		wg.Go(h.Release)
	}
	wg.Wait()
	require.ErrorIs(t, m.Free(), ErrLent, "one hold is still held")
	last.Release()
	require.NoError(t, m.Free())
}

// Huge pages asked where the kernel cannot give them (none reserved, or
// no such page size at all): base pages, said so, naming what was asked,
// the kernel's refusal and what its pool says; where it can, huge pages,
// as the kernel's flags show. Either branch holds on any Linux host.
func TestHugePages(t *testing.T) {
	for _, huge := range []HugePages{HugePages2MiB, HugePages1GiB} {
		t.Run(huge.String(), func(t *testing.T) {
			m, err := Map(Geometry{SlotBytes: 64 << 10, SlotCount: 4}, Options{HugePages: huge})
			require.NoError(t, err)
			rep := m.Report()
			if rep.Pages == huge {
				assert.Empty(t, rep.HugePagesWhy)
				assert.True(t, vmFlags(t, m.Regions()[0].Base)["ht"])
				assert.Zero(t, rep.Bytes%huge.size())
				t.Logf("%v: %v", huge, rep)
			} else {
				assert.Equal(t, NormalPages, rep.Pages)
				assert.Contains(t, rep.HugePagesWhy, huge.String()+" asked: mmap(MAP_HUGETLB): ")
				assert.Contains(t, rep.HugePagesWhy, hugePool(huge), "the why says what the kernel's pool holds")
				assert.Contains(t, rep.String(), rep.HugePagesWhy)
				assert.Equal(t, strings.Contains(rep.HugePagesWhy, "MADV_HUGEPAGE"), rep.Advised, "Advised says transparent huge pages were advised")
				t.Logf("fell back: %v", rep)
			}
			m.Slot(0, 3)[0] = 1
			require.NoError(t, m.Free())
		})
	}
}

func TestLock(t *testing.T) {
	m, err := Map(Geometry{SlotBytes: 4096, SlotCount: 4}, Options{Lock: true})
	require.NoError(t, err)
	rep := m.Report()
	if !rep.Locked {
		t.Logf("not locked here: %s", rep.LockWhy)
		assert.True(t, strings.HasPrefix(rep.LockWhy, "mlock: "), "the why names the call that failed: %q", rep.LockWhy)
		var lim unix.Rlimit
		if unix.Getrlimit(unix.RLIMIT_MEMLOCK, &lim) == nil && lim.Cur != unix.RLIM_INFINITY {
			assert.Contains(t, rep.LockWhy, "RLIMIT_MEMLOCK", "a finite limit is named")
		}
	} else {
		assert.True(t, vmFlags(t, m.Regions()[0].Base)["lo"], "the kernel says locked")
		assert.Contains(t, rep.String(), "locked in RAM")
	}
	require.NoError(t, m.Free())
}

// capIPCLock is CAP_IPC_LOCK, which lets a process lock memory beyond
// RLIMIT_MEMLOCK.
const capIPCLock = 14

// withoutIPCLock runs f on one OS thread whose effective capabilities
// lack CAP_IPC_LOCK, under an RLIMIT_MEMLOCK of limit bytes, as an
// unprivileged process would be; both are restored after.
func withoutIPCLock(t *testing.T, limit uint64, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var caps [2]unix.CapUserData
	require.NoError(t, unix.Capget(&hdr, &caps[0]))
	saved := caps
	caps[0].Effective &^= 1 << capIPCLock
	require.NoError(t, unix.Capset(&hdr, &caps[0]))
	defer func() { require.NoError(t, unix.Capset(&hdr, &saved[0])) }()
	var old unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_MEMLOCK, &old))
	low := old
	low.Cur = limit
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_MEMLOCK, &low))
	defer func() { require.NoError(t, unix.Setrlimit(unix.RLIMIT_MEMLOCK, &old)) }()
	f()
}

// mlock refused by a low RLIMIT_MEMLOCK: reported, naming the limit, and
// the memory still usable.
func TestLockRefusedUnderALowLimit(t *testing.T) {
	var m *Memory
	withoutIPCLock(t, 64<<10, func() {
		var err error
		m, err = Map(Geometry{SlotBytes: 1 << 20, SlotCount: 2}, Options{Lock: true})
		require.NoError(t, err)
	})
	rep := m.Report()
	assert.False(t, rep.Locked)
	assert.Contains(t, rep.LockWhy, "RLIMIT_MEMLOCK is 64 KiB, the mapping 2 MiB")
	assert.Contains(t, rep.String(), "not locked (mlock:")
	assert.False(t, vmFlags(t, m.Regions()[0].Base)["lo"])
	slot := m.Slot(0, 1)
	slot[len(slot)-1] = 7 // usable all the same
	require.NoError(t, m.Free())
}

func TestNUMANode(t *testing.T) {
	m, err := Map(Geometry{SlotBytes: 4096, SlotCount: 4}, Options{BindNode: true, Node: 0})
	require.NoError(t, err)
	rep := m.Report()
	if rep.Node == 0 {
		assert.Contains(t, rep.String(), "bound to NUMA node 0")
	} else {
		t.Logf("node 0 not bound here: %s", rep.NodeWhy)
		assert.NotEmpty(t, rep.NodeWhy)
	}
	require.NoError(t, m.Free())

	m, err = Map(Geometry{SlotBytes: 4096, SlotCount: 1}, Options{BindNode: true, Node: 999})
	require.NoError(t, err)
	assert.Equal(t, -1, m.Report().Node)
	assert.Contains(t, m.Report().NodeWhy, "no NUMA node 999")
	require.NoError(t, m.Free())
}

// What the pool says, for each state a host's huge page folder can be
// in, whatever this host's is.
func TestHugePool(t *testing.T) {
	sysfs := t.TempDir()
	assert.Equal(t, "this system has no 1 GiB huge pages", hugePoolIn(sysfs, HugePages1GiB))
	dir := filepath.Join(sysfs, "hugepages-2048kB")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nr_hugepages"), []byte("0\n"), 0o644))
	assert.Equal(t, dir+"/nr_hugepages is 0 (set it, or vm.nr_hugepages, to reserve them)", hugePoolIn(sysfs, HugePages2MiB))
	require.NoError(t, os.Mkdir(filepath.Join(sysfs, "hugepages-1048576kB"), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(sysfs, "hugepages-1048576kB", "nr_hugepages"), 0o755)) // unreadable as a file
	assert.Contains(t, hugePoolIn(sysfs, HugePages1GiB), "cannot read "+sysfs+"/hugepages-1048576kB/nr_hugepages: ")
}

func TestReportString(t *testing.T) {
	r := Report{Bytes: 64 << 20, Pages: NormalPages, HugePagesWhy: "2 MiB huge pages asked: none", LockWhy: "mlock: no", Node: -1, DontFork: true}
	assert.Equal(t, "64 MiB, base pages (2 MiB huge pages asked: none), not locked (mlock: no), not shared with forked children", r.String())
	r = Report{Bytes: 1 << 30, Pages: HugePages1GiB, Locked: true, Node: 1, DontFork: true}
	assert.Equal(t, "1 GiB, 1 GiB huge pages, locked in RAM, bound to NUMA node 1, not shared with forked children", r.String())
	assert.Equal(t, "12345 B", size(12345))
}

// reserveHugePages adds n 2 MiB huge pages to the kernel's pool for the
// test, where the test may (root, a writable pool), and gives them back
// after; false when it cannot.
func reserveHugePages(t *testing.T, n int) bool {
	const pool = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
	if os.Geteuid() != 0 {
		return false
	}
	read := func() int {
		data, err := os.ReadFile(pool)
		if err != nil {
			return -1
		}
		v, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			return -1
		}
		return v
	}
	before := read()
	if before < 0 || os.WriteFile(pool, []byte(strconv.Itoa(before+n)), 0o644) != nil {
		return false
	}
	t.Cleanup(func() { _ = os.WriteFile(pool, []byte(strconv.Itoa(before)), 0o644) })
	return read() >= before+n
}

// With 2 MiB huge pages in the pool, a mapping gets them, locked, and the
// kernel's flags say so.
func TestHugePagesReserved(t *testing.T) {
	if !reserveHugePages(t, 2) {
		t.Skip("cannot reserve 2 MiB huge pages here (not root, or the pool is not writable): the fallback is tested above")
	}
	m, err := Map(Geometry{SlotBytes: 1 << 20, SlotCount: 3}, Options{HugePages: HugePages2MiB, Lock: true})
	require.NoError(t, err)
	rep := m.Report()
	require.Equal(t, HugePages2MiB, rep.Pages, "%v", rep)
	assert.EqualValues(t, 4<<20, rep.Bytes, "rounded up to whole huge pages")
	flags := vmFlags(t, m.Regions()[0].Base)
	assert.True(t, flags["ht"], "hugetlb")
	assert.True(t, flags["dc"], "do not copy on fork")
	assert.True(t, rep.Locked, "%v", rep)
	assert.False(t, flags["lo"], "the kernel never marks a hugetlb mapping locked: its pages cannot be swapped out anyway")
	m.Slot(0, 2)[1<<20-1] = 1
	require.NoError(t, m.Free())
}

// Prefault leaves every page of the mapping resident before Map returns
// (mincore), the memory still zero, and says how long it took; without
// it no page of a fresh mapping is resident.
func TestPrefault(t *testing.T) {
	for _, o := range []Options{{Prefault: true}, {Prefault: true, HugePages: HugePages2MiB}, {}} {
		t.Run(fmt.Sprintf("%+v", o), func(t *testing.T) {
			m, err := Map(Geometry{SlotBytes: 64 << 10, SlotCount: 16}, o)
			require.NoError(t, err)
			defer func() { require.NoError(t, m.Free()) }()
			b := m.Bytes(0)
			resident := make([]byte, (len(b)+os.Getpagesize()-1)/os.Getpagesize())
			_, _, errno := unix.Syscall(unix.SYS_MINCORE, base(b), uintptr(len(b)), uintptr(unsafe.Pointer(&resident[0])))
			require.Zero(t, errno, "mincore")
			in := 0
			for _, r := range resident {
				in += int(r & 1)
			}
			rep := m.Report()
			if o.Prefault {
				assert.Equal(t, len(resident), in, "every page resident")
				assert.Positive(t, rep.Prefault)
				assert.Contains(t, rep.String(), "faulted in in ")
			} else {
				assert.Zero(t, in, "no page touched")
				assert.Zero(t, rep.Prefault)
				assert.NotContains(t, rep.String(), "faulted in")
			}
			assert.Equal(t, make([]byte, len(b)), b, "the memory is zero")
			if rep.Advised {
				assert.Contains(t, rep.HugePagesWhy, "MADV_HUGEPAGE")
			}
		})
	}
}
