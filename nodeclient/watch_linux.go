//go:build linux

package nodeclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// soPeerPIDFD is SO_PEERPIDFD (Linux 6.5): a pidfd of the socket's peer
// as it was at connect time. golang.org/x/sys does not name it yet.
const soPeerPIDFD = 77

// usePeerPIDFD is false only in the tests of the fallback, as on a
// kernel without SO_PEERPIDFD.
var usePeerPIDFD = true

// watch holds a pidfd of the node's process, taken at connect, and says
// when that process exited. A watch with no pidfd (fd -1) proves
// nothing; why says so.
type watch struct {
	pid int    // the node's pid, as this process sees it; 0 if unknown
	via string // how the pidfd was taken, or why there is none
	fd  int    // the pidfd, -1 when there is none

	mu     sync.RWMutex // waiters poll under the read lock; close takes the write lock
	exited bool
	closed bool
}

// watchPeer takes a pidfd of the process at the other end of conn, the
// node that said its pid is nodePID. It is called while the connection
// is open. First SO_PEERPIDFD; else pidfd_open of the SO_PEERCRED pid,
// kept only if, after it was opened, the connection is still open and
// the peer's pid the same (so the pidfd names the node, not a process
// that took its pid after it died). A peer whose pid this process
// cannot see (0: another PID namespace), that is this very process, or
// whose pid is not the one the node said (a process that listened and
// handed the socket on) gets no pidfd.
func watchPeer(conn *net.UnixConn, nodePID uint32) *watch {
	w := &watch{fd: -1}
	raw, err := conn.SyscallConn()
	if err != nil {
		w.via = "no pidfd: " + err.Error()
		return w
	}
	cerr := raw.Control(func(sfd uintptr) { w.take(int(sfd), nodePID) })
	if cerr != nil && w.fd < 0 && w.via == "" {
		w.via = "no pidfd: " + cerr.Error()
	}
	return w
}

func (w *watch) take(sfd int, nodePID uint32) {
	cred, err := unix.GetsockoptUcred(sfd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		w.via = fmt.Sprintf("no pidfd: SO_PEERCRED: %v", err)
		return
	}
	w.pid = int(cred.Pid)
	switch {
	case cred.Pid == 0:
		w.via = "no pidfd: the node's pid is not visible from this PID namespace"
		return
	case int(cred.Pid) == os.Getpid():
		w.via = "no pidfd: the node runs in this process"
		return
	case uint32(cred.Pid) != nodePID:
		w.via = fmt.Sprintf("no pidfd: the socket's peer is pid %d, the node says it is pid %d", cred.Pid, nodePID)
		return
	}
	if usePeerPIDFD {
		if fd, err := unix.GetsockoptInt(sfd, unix.SOL_SOCKET, soPeerPIDFD); err == nil {
			w.fd, w.via = fd, "SO_PEERPIDFD"
			unix.CloseOnExec(fd)
			return
		}
	}
	fd, err := unix.PidfdOpen(int(cred.Pid), unix.PIDFD_NONBLOCK)
	if err != nil {
		w.via = fmt.Sprintf("no pidfd: pidfd_open(%d): %v", cred.Pid, err)
		return
	}
	unix.CloseOnExec(fd)
	again, err := unix.GetsockoptUcred(sfd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil || again.Pid != cred.Pid || peerHungUp(sfd) {
		_ = unix.Close(fd)
		w.via = fmt.Sprintf("no pidfd: the connection to pid %d ended while its pidfd was taken", cred.Pid)
		return
	}
	w.fd, w.via = fd, "pidfd_open of the SO_PEERCRED pid"
}

// peerHungUp reports whether the socket's peer closed its end.
func peerHungUp(sfd int) bool {
	p := []unix.PollFd{{Fd: int32(sfd), Events: unix.POLLRDHUP}}
	n, err := unix.Poll(p, 0)
	return err == nil && n > 0 && p[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0
}

// proves reports whether the watch holds a pidfd.
func (w *watch) proves() bool { return w.fd >= 0 }

// wait waits within ctx for the node's process to exit: nil once it
// has; an error wrapping ErrNoEvidence when the watch has no pidfd, or
// ctx's error.
func (w *watch) wait(ctx context.Context) error {
	if !w.proves() {
		return fmt.Errorf("%w (%s)", ErrNoEvidence, w.via)
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.exited {
		return nil
	}
	if w.closed {
		return fmt.Errorf("%w (the client let go of the node's pidfd)", ErrNoEvidence)
	}
	if ctx.Err() != nil {
		if w.readable(0) {
			return nil
		}
		return ctx.Err()
	}
	// An eventfd wakes the poll when ctx ends, so the wait sees the
	// exit the moment the kernel reports it, without ticking.
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return fmt.Errorf("kvshare/nodeclient: waiting for the node's exit: eventfd: %w", err)
	}
	defer unix.Close(efd)
	var woke sync.WaitGroup
	woke.Add(1)
	stop := context.AfterFunc(ctx, func() {
		defer woke.Done()
		_, _ = unix.Write(efd, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	})
	defer func() {
		if !stop() {
			woke.Wait() // the write ran or runs: let it finish before the close
		}
	}()
	for {
		p := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}, {Fd: int32(efd), Events: unix.POLLIN}}
		_, err := unix.Poll(p, -1)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return fmt.Errorf("kvshare/nodeclient: waiting for the node's exit: poll: %w", err)
		case p[0].Revents != 0:
			return nil
		case p[1].Revents != 0:
			if w.readable(0) {
				return nil
			}
			return ctx.Err()
		}
	}
}

// readable polls the pidfd for up to ms milliseconds (0: at once; the
// caller holds the read lock): true once the node's process exited.
func (w *watch) readable(ms int) bool {
	p := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(p, ms)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n > 0 && p[0].Revents != 0
	}
}

// exitedWithin reports whether the node's process exited, waiting up
// to ms milliseconds for it.
func (w *watch) exitedWithin(ms int) bool {
	if !w.proves() {
		return false
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.exited {
		return true
	}
	if w.closed {
		return false
	}
	return w.readable(ms)
}

// close marks the exit proven (exited) or lets the pidfd go, and closes
// it; later waits answer from what was known.
func (w *watch) close(exited bool) {
	if !w.proves() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.exited = exited
	w.closed = true
	_ = unix.Close(w.fd)
}
