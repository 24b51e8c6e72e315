package loopback

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"
)

// ReadyPoll is how often WaitReady tries the child's ports.
const ReadyPoll = 25 * time.Millisecond

// WaitReady waits until the child listens on every port and a dial to
// each is accepted, bounded by timeout and ctx. A port is tried by a dial
// first; only once a dial is accepted is /proc read, to tell the child's
// own listener from another program's on the same port, so a child that
// takes long to listen costs a refused dial a port a poll.
func (pr *Process) WaitReady(ctx context.Context, timeout time.Duration, ports ...int) error {
	return pr.waitReady(ctx, timeout, Host, "/proc/net", ports)
}

// WaitReadyAt is WaitReady for a child listening on host in a network
// namespace of its own: the dials go to host, and the child's listeners
// are read from its own namespace's tables (/proc/PID/net).
func (pr *Process) WaitReadyAt(ctx context.Context, timeout time.Duration, host string, ports ...int) error {
	return pr.waitReady(ctx, timeout, host, fmt.Sprintf("/proc/%d/net", pr.PID), ports)
}

func (pr *Process) waitReady(ctx context.Context, timeout time.Duration, host, tables string, ports []int) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(ReadyPoll)
	defer tick.Stop()
	pending := append([]int(nil), ports...)
	for {
		pending = notAccepting(ctx, pr.PID, host, tables, pending)
		if len(pending) == 0 && pr.Alive() {
			return nil
		}
		select {
		case <-pr.exited:
			return pr.ExitError(ErrEarlyExit)
		case <-ctx.Done():
			return fmt.Errorf("%w: %s pid %d: ports %v not accepting after %v (%w); log %s:\n%s",
				ErrNotReady, pr.Name, pr.PID, pending, timeout, context.Cause(ctx), pr.LogPath, LogTail(pr.LogPath))
		case <-tick.C:
		}
	}
}

// notAccepting returns the ports of pending that refuse a dial on host
// or that pid does not own (by the listener tables under tables).
func notAccepting(ctx context.Context, pid int, host, tables string, pending []int) []int {
	var left []int
	for _, port := range pending {
		d := net.Dialer{Timeout: time.Second}
		conn, err := d.DialContext(ctx, "tcp4", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			left = append(left, port)
			continue
		}
		_ = conn.Close()
		// A child's own tables that cannot be read (it is exiting) prove
		// nothing either way: not ready. The caller's own tables can
		// always be read; where they cannot (no /proc), the dial alone
		// decides, as before.
		owns, known := ownsListenerIn(tables, pid, port)
		if (known && !owns) || (!known && tables != "/proc/net") {
			left = append(left, port)
		}
	}
	return left
}
