package bench

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/nodewire"
)

// socketFloor is measurement 8's floor: one round trip over a Unix
// stream socketpair of the frames a node's submission costs at least —
// a publish or fetch frame of the view's rows, encoded with nodewire,
// written one way, read and decoded on the other side, answered by an
// outcome frame of as many rows, read and decoded back.
type socketFloor struct {
	engine, peer *nodewire.Conn
	served       chan error
}

// newSocketFloor opens the socketpair and starts its echoing side.
func newSocketFloor() (*socketFloor, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("bench: socketpair: %w", err)
	}
	a, aerr := unixConn(fds[0], "engine")
	b, berr := unixConn(fds[1], "peer")
	if err := errors.Join(aerr, berr); err != nil {
		for _, c := range []*net.UnixConn{a, b} {
			if c != nil {
				_ = c.Close()
			}
		}
		return nil, err
	}
	f := &socketFloor{engine: nodewire.NewConn(a), peer: nodewire.NewConn(b), served: make(chan error, 1)}
	go func() { f.served <- f.echo() }()
	return f, nil
}

// unixConn makes fd a *net.UnixConn (the fd is closed either way).
func unixConn(fd int, name string) (*net.UnixConn, error) {
	file := os.NewFile(uintptr(fd), name)
	defer file.Close()
	c, err := net.FileConn(file)
	if err != nil {
		return nil, fmt.Errorf("bench: socketpair %s: %w", name, err)
	}
	return c.(*net.UnixConn), nil
}

// echo answers every transfer frame with an outcome of as many rows,
// every one Ready, until the stream ends.
func (f *socketFloor) echo() error {
	for {
		h, m, _, err := f.peer.ReadFrame(nodewire.NodeBodyLimit(1 << 16))
		if err != nil {
			return err
		}
		t, ok := m.(*nodewire.Transfer)
		if !ok {
			return fmt.Errorf("bench: socket floor: a %v frame", h.Type)
		}
		rows := 0
		for _, g := range t.Groups {
			rows += len(g.Slots)
		}
		out := &nodewire.Outcome{Rows: make([]contract.RowStatus, rows)}
		for i := range out.Rows {
			out.Rows[i] = contract.Ready
		}
		if err := f.peer.WriteFrame(h.Request, out, -1); err != nil {
			return err
		}
	}
}

// roundTrip times one frame of v in direction dir there and its
// outcome back.
func (f *socketFloor) roundTrip(request uint64, dir contract.Direction, v contract.View) (time.Duration, error) {
	t := &nodewire.Transfer{Dir: dir, Lend: 1}
	for _, g := range v.Groups {
		wg := nodewire.Group{Region: uint32(g.Region), Slots: make([]uint32, len(g.Slots)), Names: g.Names}
		for i, s := range g.Slots {
			wg.Slots[i] = uint32(s)
		}
		t.Groups = append(t.Groups, wg)
	}
	defer sampleRegion("socket floor", dir, v.Rows()).End()
	start := time.Now()
	if err := f.engine.WriteFrame(request, t, -1); err != nil {
		return 0, err
	}
	_, m, _, err := f.engine.ReadFrame(nodeclient.DefaultMaxFrame) // what the Go client reads at most
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if o, ok := m.(*nodewire.Outcome); !ok || len(o.Rows) != v.Rows() {
		return 0, fmt.Errorf("bench: socket floor: answered %T for %d rows", m, v.Rows())
	}
	return d, nil
}

// close ends the stream and waits for the echoing side.
func (f *socketFloor) close() error {
	err := f.engine.Close()
	<-f.served
	return errors.Join(err, f.peer.Close())
}
