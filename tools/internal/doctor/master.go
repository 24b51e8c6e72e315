package doctor

import (
	"context"
	"net"
	"strconv"
	"time"
)

// ephemeralFloor is where Linux's default ephemeral port range starts
// (net.ipv4.ip_local_port_range 32768–60999).
const ephemeralFloor = 32768

// checkMaster dials the master's RPC address once, within wait: the
// client waits for it the same way before its setup. A port in the
// ephemeral range passes with a warning.
func checkMaster(ctx context.Context, addr string, wait time.Duration) Finding {
	d := net.Dialer{Timeout: wait}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fail(CheckMaster, "%s does not accept a TCP connection: %v (is mooncake_master running there, with --rpc_address and --rpc_port matching [mooncake] master?)", addr, err)
	}
	_ = conn.Close() // only the accept mattered
	if _, port, _ := net.SplitHostPort(addr); ephemeralPort(port) {
		return warn(CheckMaster, "%s accepts TCP connections, but port %s is in Linux's ephemeral range (from %d): an outgoing connection can take it while the master restarts; use a port below %d",
			addr, port, ephemeralFloor, ephemeralFloor)
	}
	return ok(CheckMaster, "%s accepts TCP connections", addr)
}

func ephemeralPort(port string) bool {
	n, err := strconv.Atoi(port)
	return err == nil && n >= ephemeralFloor
}
