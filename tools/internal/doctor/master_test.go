package doctor

import (
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/patience"
)

func TestUnreachableMaster(t *testing.T) {
	addr := closedPort(t)
	f := dialMaster(t.Context(), addr, patience.Wait())
	assert.Equal(t, Fail, f.Verdict)
	assert.Contains(t, f.Detail, addr)
	assert.Contains(t, f.Detail, "connection refused")
	assert.Contains(t, f.Detail, "[mooncake] master")
}

// A bare accept is never ok: it proves no master.
func TestAcceptIsNotAnAnswer(t *testing.T) {
	addr := listening(t)
	f := dialMaster(t.Context(), addr, patience.Wait())
	assert.Equal(t, Skip, f.Verdict, f.Detail)
	assert.Contains(t, f.Detail, addr+" accepts TCP connections, but no Mooncake master was seen to answer")
	if _, port, _ := net.SplitHostPort(addr); ephemeralPort(port) { // the kernel picked the port: usually ephemeral
		assert.Contains(t, f.Detail, "below 32768")
	}
}

func TestMasterAnswer(t *testing.T) {
	setup := fmt.Errorf("%w: master 10.0.0.1:1: context deadline exceeded", mooncakesdk.ErrSetup)
	unhealthy := fmt.Errorf("%w: master unreachable (health check answered 2)", mooncakesdk.ErrUnhealthy)
	unreachable := fmt.Errorf("%w: master 10.0.0.1:25151 did not accept a connection", mooncakesdk.ErrMaster)
	for _, c := range []struct {
		name    string
		addr    string
		err     error
		verdict Verdict
		want    string
	}{
		{"set up and healthy", "10.0.0.1:25151", nil, OK, "10.0.0.1:25151 answered: the client's setup asked it for its version"},
		{"answered on an ephemeral port", "10.0.0.1:40000", nil, Warn, "port 40000 is in Linux's ephemeral range"},
		{"setup failed: not proven", "10.0.0.1:1", setup, Skip, "no Mooncake master was seen to answer: the client's setup, which first asks the master for its version, failed (see client)"},
		{"unhealthy after setup", "10.0.0.1:25151", unhealthy, Fail, "health check: mooncakesdk: client unhealthy: master unreachable"},
		{"the SDK's own wait", "10.0.0.1:25151", unreachable, Fail, "did not accept a connection"},
		{"anything else", "10.0.0.1:25151", errors.New("odd"), Skip, "no Mooncake master was seen to answer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := masterAnswer(c.addr, c.err)
			assert.Equal(t, CheckMaster, f.Check)
			assert.Equal(t, c.verdict, f.Verdict, f.Detail)
			assert.Contains(t, f.Detail, c.want)
		})
	}
}

func TestEphemeralPort(t *testing.T) {
	for port, want := range map[string]bool{"25151": false, "32767": false, "32768": true, "60999": true, "x": false} {
		assert.Equal(t, want, ephemeralPort(port), port)
	}
	assert.Empty(t, ephemeralNote("10.0.0.1:25151"))
	assert.Contains(t, ephemeralNote("10.0.0.1:32768"), "use a port below 32768")
}
