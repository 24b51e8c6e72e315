package pool_test

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/mooncakedrv/pool/pooltest"
)

// BenchmarkStart is what starting a pool costs in CPU: this process's
// (launching, and waiting until each process listens: a dial a port a
// poll, /proc read only once a dial is accepted) and the pool's own
// processes' until they were ready, each per start (the goal: this
// process's at most 200 ms). The wall time is the master's and the
// provider's own start-up. It runs with the real-pool tier.
func BenchmarkStart(b *testing.B) {
	dir := pooltest.Dir(b)
	var ours, theirs time.Duration
	for b.Loop() {
		before := selfCPU()
		p, err := pool.Start(b.Context(), pool.Options{Dir: dir, LogDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		ours += selfCPU() - before
		for _, pid := range p.PIDs() {
			theirs += processCPU(pid)
		}
		if err := p.Stop(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(ours.Milliseconds())/float64(b.N), "cpu-ms/start")
	b.ReportMetric(float64(theirs.Milliseconds())/float64(b.N), "pool-cpu-ms/start")
}

// selfCPU is this process's user and system time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU is process pid's user and system time so far, from
// /proc/pid/stat (in clock ticks of 10 ms); 0 when it cannot be read.
func processCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	text := string(data)
	fields := strings.Fields(text[strings.LastIndexByte(text, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	var user, sys int64
	_, _ = fmt.Sscan(fields[11], &user)
	_, _ = fmt.Sscan(fields[12], &sys)
	return time.Duration(user+sys) * 10 * time.Millisecond
}
