package doctor

import (
	"context"
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// ephemeralFloor is where Linux's default ephemeral port range starts
// (net.ipv4.ip_local_port_range 32768–60999).
const ephemeralFloor = 32768

// dialMaster dials the master's RPC address once, within wait, as a fast
// first hint: a refusal fails the check. An accepted connection proves
// nothing (a firewall or proxy may accept every connection), so its
// finding is a skip, not proven, until masterAnswer replaces it with what
// the client's setup saw.
func dialMaster(ctx context.Context, addr string, wait time.Duration) Finding {
	d := net.Dialer{Timeout: wait}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fail(CheckMaster, "%s does not accept a TCP connection: %v (is mooncake_master running there, with --rpc_address and --rpc_port matching [mooncake] master?)%s",
			addr, err, ephemeralNote(addr))
	}
	_ = conn.Close() // only the accept mattered
	return skip(CheckMaster, "%s accepts TCP connections, but no Mooncake master was seen to answer: the client was not opened (a check above failed)%s",
		addr, ephemeralNote(addr))
}

// masterAnswer is the master's finding after the client's open (err:
// openClient's): a setup that succeeded asked the master for its version
// and found it the library's (Mooncake's MasterClient::Connect), so the
// master answered; a health check that failed after it fails the check;
// a setup that failed leaves the master not proven.
func masterAnswer(addr string, err error) Finding {
	switch {
	case err == nil:
		if note := ephemeralNote(addr); note != "" {
			return warn(CheckMaster, "%s answered: the client's setup asked it for its version (the library's) and its health check passed%s", addr, note)
		}
		return ok(CheckMaster, "%s answered: the client's setup asked it for its version (the library's) and its health check passed", addr)
	case errors.Is(err, mooncakesdk.ErrUnhealthy):
		return fail(CheckMaster, "%s answered the client's setup, but then the client's health check: %v", addr, err)
	case errors.Is(err, mooncakesdk.ErrMaster):
		return fail(CheckMaster, "%v", err)
	}
	return skip(CheckMaster, "%s accepts TCP connections, but no Mooncake master was seen to answer: the client's setup, which first asks the master for its version, failed (see client)%s",
		addr, ephemeralNote(addr))
}

// ephemeralNote warns of a master port in the ephemeral range.
func ephemeralNote(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	if !ephemeralPort(port) {
		return ""
	}
	return "; port " + port + " is in Linux's ephemeral range (from " + strconv.Itoa(ephemeralFloor) +
		"): an outgoing connection can take it while the master restarts; use a port below " + strconv.Itoa(ephemeralFloor)
}

func ephemeralPort(port string) bool {
	n, err := strconv.Atoi(port)
	return err == nil && n >= ephemeralFloor
}
