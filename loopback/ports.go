package loopback

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
)

// Host is the only address the children listen on by name.
const Host = "127.0.0.1"

// The ports PickPorts draws from: below the kernel's ephemeral range (a
// listener there can collide with an outgoing connection's source port)
// and outside the ranges Mooncake's transfer engine listens in on every
// address by itself.
const (
	PortLow  = 10000
	PortHigh = 32767 // inclusive
)

// reservedPorts are the transfer engine's own any-address ranges, inclusive.
var reservedPorts = [][2]int{{12300, 14300}, {15000, 17000}}

// portCount is how many ports lie in [PortLow, PortHigh].
const portCount = PortHigh - PortLow + 1

// PickTries bounds the probes of one PickPorts call.
const PickTries = 200

// Allowed reports whether PickPorts may hand out port.
func Allowed(port int) bool {
	if port < PortLow || port > PortHigh {
		return false
	}
	for _, r := range reservedPorts {
		if port >= r[0] && port <= r[1] {
			return false
		}
	}
	return true
}

// Ports is a request for ports.
type Ports struct {
	// N is how many distinct ports to pick.
	N int
	// Avoid lists ports not to pick (and, with Companion, not to use as a
	// companion either).
	Avoid []int
	// Companion, when not 0, makes every picked port p need p+Companion
	// too: allowed, free, distinct from every other port picked and
	// companion, and not in Avoid.
	Companion int
}

// PickPorts returns n distinct allowed ports, each free when probed (a
// listener on Host opened and closed at once), none in avoid.
func PickPorts(n int, avoid ...int) ([]int, error) {
	return Pick(Ports{N: n, Avoid: avoid})
}

// Pick returns the ports req asks for, in at most PickTries probes.
func Pick(req Ports) ([]int, error) {
	taken := map[int]bool{}
	for _, p := range req.Avoid {
		taken[p] = true
	}
	ports := make([]int, 0, req.N)
	for range PickTries {
		if len(ports) == req.N {
			break
		}
		port := PortLow + rand.IntN(portCount)
		if taken[port] || !Allowed(port) {
			continue
		}
		taken[port] = true
		if req.Companion == 0 {
			if Free(port) {
				ports = append(ports, port)
			}
			continue
		}
		c := port + req.Companion
		if taken[c] || !Allowed(c) {
			continue
		}
		if Free(port) && Free(c) {
			taken[c] = true
			ports = append(ports, port)
		}
	}
	if len(ports) < req.N {
		return nil, fmt.Errorf("%w: found %d of %d in %d tries", ErrNoPorts, len(ports), req.N, PickTries)
	}
	return ports, nil
}

// Free reports whether a listener on Host:port can be opened now.
func Free(port int) bool {
	l, err := net.Listen("tcp4", HostPort(port))
	if err != nil {
		return false
	}
	return l.Close() == nil
}

// HostPort is "127.0.0.1:port".
func HostPort(port int) string { return net.JoinHostPort(Host, strconv.Itoa(port)) }
