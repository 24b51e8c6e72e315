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
	// The path is the rest of the line from the sixth field on; it may
	// hold spaces. A path begins with '/', which no field before it
	// holds, so it begins at the line's first '/'.
	if !strings.HasPrefix(fields[5], "/") {
		return "", false
	}
	_, path, _ := strings.Cut(line, "/")
	return "/" + strings.TrimSpace(path), true
}
