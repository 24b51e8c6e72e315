package doctor

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestUnreachableMaster(t *testing.T) {
	addr := closedPort(t)
	f := checkMaster(t.Context(), addr, 5*time.Second)
	assert.Equal(t, Fail, f.Verdict)
	assert.Contains(t, f.Detail, addr)
	assert.Contains(t, f.Detail, "connection refused")
	assert.Contains(t, f.Detail, "[mooncake] master")
}

func TestReachableMaster(t *testing.T) {
	addr := listening(t)
	f := checkMaster(t.Context(), addr, 5*time.Second)
	_, port, _ := net.SplitHostPort(addr)
	if ephemeralPort(port) { // the kernel picked the port: usually ephemeral
		assert.Equal(t, Warn, f.Verdict, f.Detail)
		assert.Contains(t, f.Detail, "below 32768")
	} else {
		assert.Equal(t, OK, f.Verdict, f.Detail)
	}
	assert.Contains(t, f.Detail, addr+" accepts")
}

func TestEphemeralPort(t *testing.T) {
	for port, want := range map[string]bool{"25151": false, "32767": false, "32768": true, "60999": true, "x": false} {
		assert.Equal(t, want, ephemeralPort(port), port)
	}
}
