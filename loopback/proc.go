package loopback

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// OwnsListener reports whether process pid holds a listening TCP socket
// on port, from /proc: a dial alone could reach another program that took
// the port first. known is false when /proc has no socket tables (then
// the caller trusts the dial); a process whose descriptors cannot be read
// (one exiting) owns nothing.
func OwnsListener(pid, port int) (owns, known bool) {
	return ownsListenerIn("/proc/net", pid, port)
}

// ownsListenerIn is OwnsListener over the tcp and tcp6 tables under dir
// (/proc/net, or /proc/PID/net for a child's own network namespace).
func ownsListenerIn(dir string, pid, port int) (owns, known bool) {
	listening := map[string]bool{}
	found := false
	for _, table := range []string{dir + "/tcp", dir + "/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		found = true
		for _, inode := range listenInodes(data, port) {
			listening[inode] = true
		}
	}
	if !found {
		return false, false
	}
	if len(listening) == 0 {
		return false, true
	}
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return false, true
	}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
		if err != nil {
			continue
		}
		inode, ok := strings.CutPrefix(target, "socket:[")
		if ok && listening[strings.TrimSuffix(inode, "]")] {
			return true, true
		}
	}
	return false, true
}

// listenInodes returns the inodes of the sockets a /proc/net/tcp table
// shows listening (state 0A) on port.
func listenInodes(table []byte, port int) []string {
	var inodes []string
	sc := bufio.NewScanner(bytes.NewReader(table))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		if len(f) < 10 || f[3] != "0A" {
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		p, err := strconv.ParseUint(hexPort, 16, 16)
		if err == nil && int(p) == port {
			inodes = append(inodes, f[9])
		}
	}
	return inodes
}

// ProcState returns the state letter of /proc/<pid>/stat ('T' when
// stopped by a signal, 'Z' for a zombie), or 0 when it cannot be read.
func ProcState(pid int) byte {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	return statState(data)
}

// statState reads the state letter of a /proc/<pid>/stat text: the field
// after the command, which ends at the text's last ')'. 0 when there is
// none.
func statState(data []byte) byte {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return 0
	}
	return data[i+2]
}
