package patience

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Source says where a machine's starvation is read from.
type Source int

const (
	// Unmeasured: nothing could be read, so the process never counts as
	// starved and only a Bound's Moved extends it.
	Unmeasured Source = iota
	// RunDelay: the run-queue delay of every thread of the process,
	// field 2 of /proc/self/task/*/schedstat.
	RunDelay
	// CgroupPressure: the "some" total of the process's cgroup's
	// cpu.pressure (cgroup v2).
	CgroupPressure
	// SystemPressure: the "some" total of /proc/pressure/cpu.
	SystemPressure
)

func (s Source) String() string {
	switch s {
	case RunDelay:
		return "run-queue delay of the process's threads (/proc/self/task/*/schedstat)"
	case CgroupPressure:
		return "the cgroup's CPU pressure (cpu.pressure, some)"
	case SystemPressure:
		return "the system's CPU pressure (/proc/pressure/cpu, some)"
	default:
		return "nothing (no schedstat, no CPU pressure): never starved"
	}
}

// Starvation returns how long, in all, the process has been kept from a
// CPU it was ready to run on since some fixed moment, and where that was
// read from. Only differences between two calls mean anything; threads
// that exit take their share with them, so a difference below zero is
// read as zero.
func Starvation() (time.Duration, Source) {
	src := source()
	return readSource(src), src
}

var source = sync.OnceValue(func() Source {
	if _, ok := readRunDelay(); ok {
		return RunDelay
	}
	if p := cgroupPressurePath(); p != "" {
		if _, ok := readPressure(p); ok {
			return CgroupPressure
		}
	}
	if _, ok := readPressure("/proc/pressure/cpu"); ok {
		return SystemPressure
	}
	return Unmeasured
})

func readSource(src Source) time.Duration {
	var d time.Duration
	switch src {
	case RunDelay:
		d, _ = readRunDelay()
	case CgroupPressure:
		d, _ = readPressure(cgroupPressurePath())
	case SystemPressure:
		d, _ = readPressure("/proc/pressure/cpu")
	}
	return d
}

// readRunDelay sums the run-queue delay of every thread of the process.
// ok is false when not one thread's schedstat could be read.
func readRunDelay() (time.Duration, bool) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0, false
	}
	var sum time.Duration
	ok := false
	for _, t := range tasks {
		data, err := os.ReadFile(filepath.Join("/proc/self/task", t.Name(), "schedstat"))
		if err != nil {
			continue // the thread exited
		}
		if d, good := ParseSchedstat(data); good {
			sum += d
			ok = true
		}
	}
	return sum, ok
}

// ParseSchedstat reads the run-queue delay, in nanoseconds, from the
// text of a schedstat file: three decimal fields (time on a CPU, time
// waiting on a run queue, time slices run).
func ParseSchedstat(data []byte) (time.Duration, bool) {
	fields := bytes.Fields(data)
	if len(fields) < 3 {
		return 0, false
	}
	for _, f := range fields[:3] {
		if _, err := strconv.ParseUint(string(f), 10, 63); err != nil {
			return 0, false
		}
	}
	n, _ := strconv.ParseUint(string(fields[1]), 10, 63)
	return time.Duration(n), true
}

// ParsePressure reads the "some" line's total, in microseconds, from the
// text of a PSI file (cpu.pressure, /proc/pressure/cpu).
func ParsePressure(data []byte) (time.Duration, bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		if kind != "some" {
			continue
		}
		for _, kv := range strings.Fields(rest) {
			k, v, _ := strings.Cut(kv, "=")
			if k != "total" {
				continue
			}
			us, err := strconv.ParseUint(v, 10, 63)
			if err != nil || us > uint64(1<<63-1)/uint64(time.Microsecond) {
				return 0, false
			}
			return time.Duration(us) * time.Microsecond, true
		}
	}
	return 0, false
}

func readPressure(path string) (time.Duration, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	return ParsePressure(data)
}

// cgroupPressurePath is the cpu.pressure of the process's cgroup v2, or
// "" when it has none.
func cgroupPressurePath() string {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			return filepath.Join("/sys/fs/cgroup", filepath.Clean("/"+rest), "cpu.pressure")
		}
	}
	return ""
}

// readStarvation is Starvation without its source; tests replace it.
var readStarvation = func() time.Duration {
	d, _ := Starvation()
	return d
}

// reading is a sample of Starvation shared by the bounds that start
// close together, so that starting a bound seldom reads /proc.
var reading struct {
	mu sync.Mutex
	at time.Time
	v  time.Duration
}

// sample returns Starvation, read afresh unless the last reading is
// younger than maxAge.
func sample(maxAge time.Duration) time.Duration {
	reading.mu.Lock()
	defer reading.mu.Unlock()
	now := time.Now()
	if maxAge > 0 && !reading.at.IsZero() && now.Sub(reading.at) < maxAge && now.Sub(reading.at) >= 0 {
		return reading.v
	}
	v := readStarvation()
	reading.at, reading.v = now, v
	return v
}
