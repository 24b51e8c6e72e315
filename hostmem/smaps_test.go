package hostmem

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// vmFlags returns the kernel's VmFlags of the mapping that holds addr,
// from /proc/self/smaps ("dc": do not copy on fork; "lo": locked; "ht":
// hugetlb).
func vmFlags(t *testing.T, addr uintptr) map[string]bool {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := addrRange(line); ok {
			in = lo <= uint64(addr) && uint64(addr) < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			flags := map[string]bool{}
			for _, fl := range strings.Fields(strings.TrimPrefix(line, "VmFlags:")) {
				flags[fl] = true
			}
			return flags
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("no mapping holds %#x in /proc/self/smaps", addr)
	return nil
}

// addrRange parses the "lo-hi perms ..." line that starts a mapping.
func addrRange(line string) (lo, hi uint64, ok bool) {
	field, _, _ := strings.Cut(line, " ")
	a, b, found := strings.Cut(field, "-")
	if !found {
		return 0, 0, false
	}
	lo, err1 := strconv.ParseUint(a, 16, 64)
	hi, err2 := strconv.ParseUint(b, 16, 64)
	return lo, hi, err1 == nil && err2 == nil
}

func TestAddrRange(t *testing.T) {
	lo, hi, ok := addrRange("7f2c1a000000-7f2c1a400000 rw-p 00000000 00:00 0")
	require.True(t, ok)
	require.Equal(t, uint64(0x7f2c1a000000), lo)
	require.Equal(t, uint64(0x7f2c1a400000), hi)
	_, _, ok = addrRange("VmFlags: rd wr mr mw me dc ac sd")
	require.False(t, ok)
	_, _, ok = addrRange(fmt.Sprintf("%s-zz rw-p", "7f"))
	require.False(t, ok)
}
