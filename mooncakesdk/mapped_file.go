package mooncakesdk

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// mappedFile finds the file mapped at addr in this process, from
// /proc/self/maps (Linux). It is how a library found by the loader's
// search path is located for hashing.
func mappedFile(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if file, ok := mapsLineFile(sc.Text(), addr); ok {
			return file, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no file is mapped at %#x", addr)
}

// mapsLineFile reports the path of one /proc/self/maps line
// ("start-end perms offset dev inode path") when addr lies in its range.
func mapsLineFile(line string, addr uintptr) (string, bool) {
	fields := strings.Fields(line)
	if len(fields) < 6 {
		return "", false
	}
	lo, hi, ok := strings.Cut(fields[0], "-")
	if !ok {
		return "", false
	}
	start, err1 := strconv.ParseUint(lo, 16, 64)
	end, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil || uint64(addr) < start || uint64(addr) >= end {
		return "", false
	}
	// The path is the rest of the line after the inode; it may hold spaces.
	rest := line
	for range 5 {
		rest = strings.TrimLeft(rest, " \t")
		i := strings.IndexAny(rest, " \t")
		if i < 0 {
			return "", false
		}
		rest = rest[i:]
	}
	path := strings.TrimSpace(rest)
	if !strings.HasPrefix(path, "/") {
		return "", false
	}
	return path, true
}
