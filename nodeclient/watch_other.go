//go:build !linux

package nodeclient

import (
	"context"
	"fmt"
	"net"
)

// watch proves nothing where there are no pidfds.
type watch struct {
	pid int
	via string
}

func watchPeer(*net.UnixConn, uint32) *watch {
	return &watch{via: "no pidfd: this system has no pidfds"}
}

func (w *watch) proves() bool { return false }

func (w *watch) wait(context.Context) error { return fmt.Errorf("%w (%s)", ErrNoEvidence, w.via) }

func (w *watch) exitedWithin(int) bool { return false }

func (w *watch) close(bool) {}
