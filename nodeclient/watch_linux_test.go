//go:build linux

package nodeclient

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/patience"
)

// The watch's tests need a peer in a process of its own: the test
// binary again, listening at KVSHARE_TEST_PEER_SOCKET; it keeps each
// connection open, or closes it at once when KVSHARE_TEST_PEER_HANGUP
// is set, until its stdin ends.
const (
	envPeerSocket = "KVSHARE_TEST_PEER_SOCKET"
	envPeerHangup = "KVSHARE_TEST_PEER_HANGUP"
)

func TestHelperPeer(t *testing.T) {
	path := os.Getenv(envPeerSocket)
	if path == "" {
		t.Skip("the peer process of the watch's tests, started by them")
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		fmt.Printf("peer: fail %v\n", err)
		os.Exit(1)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if os.Getenv(envPeerHangup) != "" {
				_ = c.Close()
				continue
			}
			peerConns = append(peerConns, c) // open until the process exits
		}
	}()
	fmt.Println("peer: ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	os.Exit(0)
}

// peerConns are the peer process's accepted connections, kept open (and
// out of the collector's reach) until it exits; only its accept loop
// touches them.
var peerConns []net.Conn

// startPeer starts the peer process and dials it; it returns the
// connection and the process.
func startPeer(t *testing.T, hangup bool) (*net.UnixConn, *exec.Cmd) {
	t.Helper()
	dir, err := os.MkdirTemp("", "kvpeer")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "peer.sock")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperPeer$")
	cmd.Env = append(os.Environ(), envPeerSocket+"="+path)
	if hangup {
		cmd.Env = append(cmd.Env, envPeerHangup+"=1")
	}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ready := make(chan struct{})
	var line string
	go func() {
		line, _ = bufio.NewReader(out).ReadString('\n')
		close(ready)
	}()
	require.True(t, patience.For(t).Wait(ready), "the peer process did not start")
	require.Equal(t, "peer: ready\n", line)
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn, cmd
}

// The fallback, as on a kernel without SO_PEERPIDFD: pidfd_open of the
// SO_PEERCRED pid while the connection is open. It proves the peer's
// exit, and only its exit: a wait that ends first gives up.
func TestWatchByPidfdOpen(t *testing.T) {
	usePeerPIDFD = false
	t.Cleanup(func() { usePeerPIDFD = true })
	conn, cmd := startPeer(t, false)
	w := watchPeer(conn, uint32(cmd.Process.Pid))
	t.Cleanup(func() { w.close(false) })
	require.True(t, w.proves(), w.via)
	assert.Equal(t, "pidfd_open of the SO_PEERCRED pid", w.via)
	assert.Equal(t, cmd.Process.Pid, w.pid)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, w.wait(ctx), context.DeadlineExceeded, "the peer lives")
	assert.False(t, w.exitedWithin(0))

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	bound, cancel := patience.For(t).Context(t.Context())
	defer cancel()
	require.NoError(t, w.wait(bound))
	assert.True(t, w.exitedWithin(0))
}

// No pidfd, and so no proof, when the peer is not the pid the node says
// it is (a process that listened and handed the socket on), when the
// connection ended before the pidfd was taken, or when the peer is this
// very process.
func TestWatchRefusesPeersItCannotProve(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		t.Run(fmt.Sprintf("fallback=%v", fallback), func(t *testing.T) {
			usePeerPIDFD = !fallback
			t.Cleanup(func() { usePeerPIDFD = true })

			conn, cmd := startPeer(t, false)
			w := watchPeer(conn, uint32(cmd.Process.Pid)+1)
			assert.False(t, w.proves())
			assert.Contains(t, w.via, fmt.Sprintf("the socket's peer is pid %d", cmd.Process.Pid))
			bound, cancel := patience.For(t).Context(t.Context())
			defer cancel()
			assert.ErrorIs(t, w.wait(bound), ErrNoEvidence)

			if fallback { // SO_PEERPIDFD names the peer as it was at connect, closed or not
				conn, cmd = startPeer(t, true)
				one := make([]byte, 1)
				_, err := conn.Read(one) // the peer's close arrives
				require.Error(t, err)
				w = watchPeer(conn, uint32(cmd.Process.Pid))
				assert.False(t, w.proves())
				assert.Contains(t, w.via, "ended while its pidfd was taken")
			}
		})
	}
	dir := t.TempDir()
	ln, err := net.Listen("unix", filepath.Join(dir, "self.sock"))
	require.NoError(t, err)
	defer ln.Close()
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: filepath.Join(dir, "self.sock"), Net: "unix"})
	require.NoError(t, err)
	defer conn.Close()
	w := watchPeer(conn, uint32(os.Getpid()))
	assert.False(t, w.proves())
	assert.Equal(t, "no pidfd: the node runs in this process", w.via)
}
