package busy

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/patience"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]int{"": 0, " ": 0, "0": 0, "8": 8, " 3 ": 3, "256": 256} {
		n, err := Parse(in)
		require.NoError(t, err, "%q", in)
		assert.Equal(t, want, n, "%q", in)
	}
	for _, in := range []string{"-1", "x", "2.5", "257", "1e3"} {
		_, err := Parse(in)
		require.Error(t, err, "%q", in)
		assert.Contains(t, err.Error(), Env)
		assert.Contains(t, err.Error(), strconv.Quote(in))
	}
}

// cpuTicks is the CPU time the kernel has charged to process pid, in
// clock ticks (fields 14 and 15 of /proc/PID/stat).
func cpuTicks(t *testing.T, pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(data), ") ")
	require.True(t, ok)
	f := strings.Fields(rest)
	utime, err := strconv.Atoi(f[11])
	require.NoError(t, err)
	stime, err := strconv.Atoi(f[12])
	require.NoError(t, err)
	return utime + stime
}

// Every process of a load burns CPU until Stop, and none is left after.
func TestLoadBurnsCPUUntilStopped(t *testing.T) {
	l, err := Start(2)
	require.NoError(t, err)
	defer l.Stop()
	pids := l.PIDs()
	require.Len(t, pids, 2)
	for _, pid := range pids {
		ctx, cancel := patience.For(t).Context(t.Context())
		for cpuTicks(t, pid) == 0 && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond) // polling the kernel's count, not synchronising
		}
		cancel()
		assert.Positive(t, cpuTicks(t, pid), "busy process %d was charged no CPU time", pid)
	}
	l.Stop()
	for _, pid := range pids {
		assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "busy process %d outlived Stop", pid)
	}
	l.Stop() // a second Stop is harmless
}

func TestStartNone(t *testing.T) {
	l, err := Start(0)
	require.NoError(t, err)
	assert.Empty(t, l.PIDs())
	l.Stop()
}
