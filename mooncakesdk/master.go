package mooncakesdk

import (
	"context"
	"fmt"
	"net"
	"time"
)

// DefaultMasterWait bounds the wait for the master when Open's context
// has no deadline.
const DefaultMasterWait = 30 * time.Second

// waitForMaster dials addr over TCP until a connection is accepted (then
// closes it) or ctx ends. The error names the address and the last dial
// failure.
func waitForMaster(ctx context.Context, addr string) error {
	var dialer net.Dialer
	pause := 20 * time.Millisecond
	for {
		conn, err := dialer.DialContext(ctx, "tcp", addr)
		if err == nil {
			_ = conn.Close() // only the accept mattered
			return nil
		}
		timer := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("%w: master %s did not accept a connection: %w (last dial: %v)", ErrMaster, addr, ctx.Err(), err)
		case <-timer.C:
		}
		pause = min(2*pause, 500*time.Millisecond)
	}
}
