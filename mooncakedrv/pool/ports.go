package pool

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
)

// Host is the only address the pool's processes listen on by name.
const Host = "127.0.0.1"

// The ports the pool picks from: below the kernel's ephemeral range (a
// listener there can collide with an outgoing connection's source port) and
// outside the ranges Mooncake's transfer engine listens in on every address
// by itself.
const (
	portLow  = 10000
	portHigh = 32767 // inclusive
)

// reservedPorts are the transfer engine's own any-address ranges, inclusive.
var reservedPorts = [][2]int{{12300, 14300}, {15000, 17000}}

// portCount is how many ports lie in [portLow, portHigh].
const portCount = portHigh - portLow + 1

// pickTries bounds the probes of one pickPorts call.
const pickTries = 200

// allowedPort reports whether the pool may pick port.
func allowedPort(port int) bool {
	if port < portLow || port > portHigh {
		return false
	}
	for _, r := range reservedPorts {
		if port >= r[0] && port <= r[1] {
			return false
		}
	}
	return true
}

// pickPorts returns n distinct allowed ports, each free when probed (a
// listener on Host opened and closed at once), none in avoid.
func pickPorts(n int, avoid ...int) ([]int, error) {
	taken := map[int]bool{}
	for _, p := range avoid {
		taken[p] = true
	}
	ports := make([]int, 0, n)
	for range pickTries {
		if len(ports) == n {
			break
		}
		port := portLow + rand.IntN(portCount)
		if taken[port] || !allowedPort(port) {
			continue
		}
		taken[port] = true
		if portFree(port) {
			ports = append(ports, port)
		}
	}
	if len(ports) < n {
		return nil, fmt.Errorf("%w: found %d of %d in %d tries", ErrNoPorts, len(ports), n, pickTries)
	}
	return ports, nil
}

// portFree reports whether a listener on Host:port can be opened now.
func portFree(port int) bool {
	l, err := net.Listen("tcp4", hostPort(port))
	if err != nil {
		return false
	}
	return l.Close() == nil
}

func hostPort(port int) string { return net.JoinHostPort(Host, strconv.Itoa(port)) }
