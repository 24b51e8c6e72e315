package loopback

import (
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAllowed(t *testing.T) {
	for port, want := range map[int]bool{
		9999: false, 10000: true, 12299: true, 12300: false, 13000: false, 14300: false,
		14301: true, 14999: true, 15000: false, 16000: false, 17000: false, 17001: true,
		25151: true, 32767: true, 32768: false, 50051: false,
	} {
		assert.Equal(t, want, Allowed(port), "port %d", port)
	}
}

func TestPickPortsAvoidsTheReservedRanges(t *testing.T) {
	for range 20 {
		ports, err := PickPorts(4)
		require.NoError(t, err)
		require.Len(t, ports, 4)
		seen := map[int]bool{}
		for _, p := range ports {
			assert.Less(t, p, 32768)
			assert.True(t, Allowed(p), "port %d", p)
			assert.False(t, seen[p], "port %d twice", p)
			seen[p] = true
		}
	}
}

func TestPickPortsSkipsBusyAndAvoidedPorts(t *testing.T) {
	// The busy port is one of the range PickPorts draws from, whatever
	// the host's ephemeral range (net.ipv4.ip_local_port_range), so that
	// Free is asked about a port Pick could hand out.
	l := listenInRange(t)
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port
	require.True(t, Allowed(busy))
	assert.False(t, Free(busy))

	first, err := PickPorts(1)
	require.NoError(t, err)
	for range 20 {
		ports, err := PickPorts(3, first[0])
		require.NoError(t, err)
		assert.NotContains(t, ports, first[0])
		assert.NotContains(t, ports, busy)
	}
}

// listenInRange listens on a port PickPorts could hand out: the first of
// a few picked that is still free when listened on.
func listenInRange(t *testing.T) net.Listener {
	t.Helper()
	ports, err := PickPorts(8)
	require.NoError(t, err)
	for _, p := range ports {
		if l, err := net.Listen("tcp4", HostPort(p)); err == nil {
			return l
		}
	}
	require.FailNow(t, "every port picked was taken before it was listened on", "%v", ports)
	return nil
}

// With a companion offset, every port's companion obeys the same rules,
// and no port is another's companion.
func TestPickCompanions(t *testing.T) {
	const offset = 10000
	for range 20 {
		ports, err := Pick(Ports{N: 3, Companion: offset})
		require.NoError(t, err)
		require.Len(t, ports, 3)
		all := map[int]bool{}
		for _, p := range ports {
			c := p + offset
			assert.True(t, Allowed(p) && Allowed(c), "port %d, companion %d", p, c)
			assert.LessOrEqual(t, p, PortHigh-offset)
			assert.False(t, all[p] || all[c], "port %d or %d twice", p, c)
			all[p], all[c] = true, true
		}
	}
	// A companion of an avoided port is never picked as a port's companion.
	ports, err := Pick(Ports{N: 2, Companion: offset, Avoid: []int{20000}})
	require.NoError(t, err)
	for _, p := range ports {
		assert.NotEqual(t, 10000, p, "20000 is avoided, so 10000's companion is")
	}
}

// Pick gives up after PickTries probes, saying how far it got.
func TestPickPortsGivesUpAfterItsTries(t *testing.T) {
	ports, err := PickPorts(PickTries + 1)
	require.ErrorIs(t, err, ErrNoPorts)
	assert.Nil(t, ports)
	assert.Contains(t, err.Error(), fmt.Sprintf(" of %d in %d tries", PickTries+1, PickTries))
}

// The draw covers the allowed range exactly, both ends included.
func TestPortCountCoversTheRange(t *testing.T) {
	assert.Equal(t, PortHigh, PortLow+portCount-1)
}

// A listener of this process is found as its own through /proc, and
// another process owns none of it.
func TestOwnsListenerFindsThisProcesssListener(t *testing.T) {
	l, err := net.Listen("tcp4", HostPort(0))
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skipf("this host has no /proc socket tables: %v", err)
	}
	owns, known := OwnsListener(os.Getpid(), port)
	assert.True(t, known, "/proc/net/tcp is there")
	assert.True(t, owns)
	owns, _ = OwnsListener(os.Getppid(), port)
	assert.False(t, owns)
}
