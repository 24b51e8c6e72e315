package doctor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// listener is one listening TCP socket of this process.
type listener struct {
	Addr  netip.Addr
	Port  int
	Inode string
}

func (l listener) String() string { return netip.AddrPortFrom(l.Addr, uint16(l.Port)).String() }

// procListeners lists this process's listening TCP sockets: the LISTEN
// rows of /proc/self/net/tcp and tcp6 whose socket inode is one of
// /proc/self/fd's.
func procListeners() ([]listener, error) {
	mine, err := socketInodes("/proc/self/fd")
	if err != nil {
		return nil, err
	}
	var all []listener
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		data, err := os.ReadFile(table)
		if os.IsNotExist(err) && table != "/proc/self/net/tcp" {
			continue // no IPv6
		}
		if err != nil {
			return nil, err
		}
		for _, l := range listenRows(data) {
			if mine[l.Inode] {
				all = append(all, l)
			}
		}
	}
	return all, nil
}

// socketInodes is the set of socket inodes among the descriptors in dir.
func socketInodes(dir string) (map[string]bool, error) {
	fds, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		if inode, ok := strings.CutPrefix(target, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	return inodes, nil
}

// listenRows parses the LISTEN rows (state 0A) of a /proc/net/tcp or
// tcp6 table; rows it cannot read are left out.
func listenRows(table []byte) []listener {
	var out []listener
	sc := bufio.NewScanner(bytes.NewReader(table))
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != "0A" {
			continue
		}
		hexAddr, hexPort, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		addr, ok := procAddr(hexAddr)
		port, err := strconv.ParseUint(hexPort, 16, 16)
		if !ok || err != nil {
			continue
		}
		out = append(out, listener{Addr: addr, Port: int(port), Inode: f[9]})
	}
	return out
}

// procAddr decodes an address as /proc/net/tcp writes it: the 4 (IPv4)
// or 16 (IPv6) bytes as 32-bit words in hex, each in the host's byte
// order.
func procAddr(s string) (netip.Addr, bool) {
	raw, err := hex.DecodeString(s)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.Addr{}, false
	}
	b := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(b[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	addr, _ := netip.AddrFromSlice(b)
	return addr.Unmap(), true
}

// checkListeners lists the listening sockets the client opened (those of
// list's answer not in before) with their addresses, and warns for each
// on an address other than loopback or hostname's ([mooncake]
// local_hostname): 0.0.0.0 and :: are every address.
func checkListeners(ctx context.Context, list func() ([]listener, error), before map[string]bool, hostname string, wait time.Duration) Finding {
	all, err := list()
	if err != nil {
		return skip(CheckListeners, "cannot list this process's sockets: %v", err)
	}
	var opened []listener
	for _, l := range all {
		if !before[l.Inode] {
			opened = append(opened, l)
		}
	}
	if len(opened) == 0 {
		return ok(CheckListeners, "the client opened no listening socket")
	}
	slices.SortFunc(opened, func(a, b listener) int { return a.Port - b.Port })
	allowed := hostAddrs(ctx, hostname, wait)
	var lines []string
	exposed := 0
	for _, l := range opened {
		where := "loopback"
		switch {
		case l.Addr.IsUnspecified():
			where = "every address"
			exposed++
		case l.Addr.IsLoopback():
		case slices.Contains(allowed, l.Addr):
			where = "[mooncake] local_hostname"
		default:
			where = "neither loopback nor [mooncake] local_hostname"
			exposed++
		}
		lines = append(lines, fmt.Sprintf("%s (%s)", l, where))
	}
	shown := strings.Join(lines, "\n")
	if exposed == 0 {
		return ok(CheckListeners, "the client listens on %d socket(s), each on loopback or %s:\n%s", len(opened), hostname, shown)
	}
	return warn(CheckListeners, "the client listens on %d socket(s), %d of them beyond loopback and %s: whoever reaches them can read and write every buffer the client registered, unauthenticated, and abort the process with one malformed handshake; fence these ports (docs/operators.md, section Security):\n%s",
		len(opened), exposed, hostname, shown)
}

// hostAddrs is the addresses of [mooncake] local_hostname (a port after
// it dropped; a name resolved within wait), none when it resolves to
// nothing.
func hostAddrs(ctx context.Context, hostname string, wait time.Duration) []netip.Addr {
	host := hostname
	if h, _, err := net.SplitHostPort(hostname); err == nil {
		host = h
	}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{a.Unmap()}
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	addrs, _ := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	return addrs
}

// inodes is the set of the listeners' socket inodes.
func inodes(ls []listener) map[string]bool {
	m := map[string]bool{}
	for _, l := range ls {
		m[l.Inode] = true
	}
	return m
}
