package bench

import (
	"runtime"
	"syscall"
	"time"
)

// loopRun is what the engine loop counted in one phase.
type loopRun struct {
	windows []int         // items finished per window
	items   int           // items in all
	stalls  int           // gaps between two items longer than the stall bound
	elapsed time.Duration // the phase's length as the loop saw it
	cpu     time.Duration // the loop thread's own CPU time
}

// rate is items per second.
func (l loopRun) rate() float64 {
	if l.elapsed <= 0 {
		return 0
	}
	return float64(l.items) / l.elapsed.Seconds()
}

// engineLoop is an engine's scheduling loop: on a thread of its own
// (locked, as an engine's main thread is), steady small work items one
// after another for d, counting items per window and the gaps between
// two items longer than stall.
func engineLoop(d, window, stall time.Duration, item int) loopRun {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU()
	r := loopRun{windows: make([]int, int(d/window))}
	var sink uint64 = 0x9e3779b97f4a7c15
	start := now()
	last := start
	for {
		sink = workItem(sink, item)
		t := now()
		if t-last > stall {
			r.stalls++
		}
		last = t
		el := t - start
		if el >= d {
			r.elapsed = el
			break
		}
		r.items++
		if w := int(el / window); w < len(r.windows) {
			r.windows[w]++
		}
	}
	r.cpu = threadCPU() - cpu0
	runtime.KeepAlive(sink) // the items' work is not optimised away
	return r
}

// workItem is one small, steady piece of work: rounds of xorshift.
func workItem(x uint64, rounds int) uint64 {
	for range rounds {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// rusageThread is Linux's RUSAGE_THREAD.
const rusageThread = 1

// threadCPU is the calling thread's CPU time, user and system.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
