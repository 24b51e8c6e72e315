package pool

import (
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAllowedPort(t *testing.T) {
	for port, want := range map[int]bool{
		9999: false, 10000: true, 12299: true, 12300: false, 13000: false, 14300: false,
		14301: true, 14999: true, 15000: false, 16000: false, 17000: false, 17001: true,
		25151: true, 32767: true, 32768: false, 50051: false,
	} {
		assert.Equal(t, want, allowedPort(port), "port %d", port)
	}
}

func TestPickPortsAvoidsTheReservedRanges(t *testing.T) {
	for range 20 {
		ports, err := pickPorts(4)
		require.NoError(t, err)
		require.Len(t, ports, 4)
		seen := map[int]bool{}
		for _, p := range ports {
			assert.Less(t, p, 32768)
			assert.True(t, allowedPort(p), "port %d", p)
			assert.False(t, seen[p], "port %d twice", p)
			seen[p] = true
		}
	}
}

func TestPickPortsSkipsBusyAndAvoidedPorts(t *testing.T) {
	l, err := net.Listen("tcp4", hostPort(0))
	require.NoError(t, err)
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port
	assert.False(t, portFree(busy))

	first, err := pickPorts(1)
	require.NoError(t, err)
	for range 20 {
		ports, err := pickPorts(3, first[0])
		require.NoError(t, err)
		assert.NotContains(t, ports, first[0])
		assert.NotContains(t, ports, busy)
	}
}

// pickPorts gives up after pickTries probes, saying how far it got.
func TestPickPortsGivesUpAfterItsTries(t *testing.T) {
	ports, err := pickPorts(pickTries + 1)
	require.ErrorIs(t, err, ErrNoPorts)
	assert.Nil(t, ports)
	assert.Contains(t, err.Error(), fmt.Sprintf(" of %d in %d tries", pickTries+1, pickTries))
}

// The draw covers the allowed range exactly, both ends included.
func TestPortCountCoversTheRange(t *testing.T) {
	assert.Equal(t, portHigh, portLow+portCount-1)
}

// A listener of this process is found as its own through /proc.
func TestOwnsListenerFindsThisProcesssListener(t *testing.T) {
	l, err := net.Listen("tcp4", hostPort(0))
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	owns, known := ownsListener(os.Getpid(), port)
	assert.True(t, known, "this machine has /proc socket tables")
	assert.True(t, owns)
}
