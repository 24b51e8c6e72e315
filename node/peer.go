package node

import (
	"fmt"
	"net"
	"slices"

	"golang.org/x/sys/unix"
)

// peer is who is on the other end of a connection, as the kernel says
// (SO_PEERCRED: the credentials of the process that connected).
type peer struct {
	pid      int32
	uid, gid uint32
}

func (p peer) String() string { return fmt.Sprintf("pid %d uid %d", p.pid, p.uid) }

// peerOf reads the connecting process's credentials.
func peerOf(c *net.UnixConn) (peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return peer{}, fmt.Errorf("kvshare/node: SO_PEERCRED: %w", err)
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return peer{}, fmt.Errorf("kvshare/node: SO_PEERCRED: %w", err)
	}
	if cerr != nil {
		return peer{}, fmt.Errorf("kvshare/node: SO_PEERCRED: %w", cerr)
	}
	return peer{pid: cred.Pid, uid: cred.Uid, gid: cred.Gid}, nil
}

// allowed reports whether uid is on the allow-list.
func allowed(list []uint32, uid uint32) bool { return slices.Contains(list, uid) }
