package bench

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used so far, user and
// system, all threads (getrusage RUSAGE_SELF; Linux sums each thread's
// exact run time). 0 if the call fails.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
