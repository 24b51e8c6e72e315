package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/tools/internal/runprefix"
)

// The checks of a node (`kvshare doctor --node SOCKET`), in the order
// they run.
const (
	CheckNodeSocket  = "socket"
	CheckNodeAttach  = "attach"
	CheckNodeWelcome = "welcome"
	CheckNodeStats   = "stats"
	CheckNodeLookup  = "lookup"
)

// nodeChecks lists every check of a node in order.
var nodeChecks = [...]string{CheckNodeSocket, CheckNodeAttach, CheckNodeWelcome, CheckNodeStats, CheckNodeLookup}

// NodeEngine is the name the doctor declares when it attaches to a
// node: a lookup-only engine, lending nothing.
const NodeEngine = "kvshare-doctor"

// RunNode checks the node listening at socket: the socket file (its
// mode and owner), an attach as a lookup-only engine (refusals said
// plainly: no node, not allowed, another version), the welcome (the
// node's version, pid and limits), the node's counters, and a lookup
// answered. Each wait is bounded by wait (DefaultWait when 0).
func RunNode(ctx context.Context, socket string, wait time.Duration) Report {
	if wait <= 0 {
		wait = DefaultWait
	}
	r := &run{Report: Report{File: socket}, all: nodeChecks[:]}
	if !r.add(checkNodeSocket(socket)) {
		r.skipRest("no socket to attach to")
		return r.Report
	}
	dctx, cancel := context.WithTimeout(ctx, wait)
	c, err := nodeclient.Dial(dctx, socket, nodeclient.Options{Engine: NodeEngine})
	cancel()
	if err != nil {
		if closedEarly(err) {
			if g := goodbyeOnAttach(ctx, socket, wait); g != nil {
				// The node closed before the client read its goodbye: the
				// goodbye says why.
				err = fmt.Errorf("%w: %s (%w)", g.Code.Err(), g.Reason, err)
			}
		}
		r.add(fail(CheckNodeAttach, "%s", attachFailure(socket, err, wait)))
		r.skipRest("the node did not welcome the doctor")
		return r.Report
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		_ = c.Close(cctx)
	}()
	w := c.Welcome()
	r.add(ok(CheckNodeAttach, "welcomed as engine %q (lookup only: it lends nothing)", NodeEngine))
	r.add(ok(CheckNodeWelcome, "protocol version %d, node pid %d; limits: frames of %s, %d attempts in flight and %s lent per engine, %d rows per request",
		w.Version, w.NodePID, size(int64(w.MaxFrame)), w.MaxAttempts, size(int64(w.MaxLendBytes)), w.MaxRows))
	sctx, cancel := context.WithTimeout(ctx, wait)
	st, err := c.Stats(sctx)
	cancel()
	if err != nil {
		r.add(fail(CheckNodeStats, "the node did not answer a stats request: %v", err))
	} else {
		r.add(nodeStats(st))
	}
	r.add(nodeLookup(ctx, c, wait))
	return r.Report
}

// checkNodeSocket says what the socket file is: its mode and owner. A
// path that is not there, or not a socket, fails; a socket others may
// connect to warns (only the allow-list then fences the node).
func checkNodeSocket(socket string) Finding {
	fi, err := os.Lstat(socket)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail(CheckNodeSocket, "%s: no such file: is the node running, and is this its --socket ([node] socket)?", socket)
	case err != nil:
		return fail(CheckNodeSocket, "%v", err)
	case fi.Mode().Type() != fs.ModeSocket:
		return fail(CheckNodeSocket, "%s is not a socket (%v)", socket, fi.Mode())
	}
	owner := ""
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		owner = fmt.Sprintf(", owner uid %d gid %d", st.Uid, st.Gid)
	}
	perm := fi.Mode().Perm()
	if perm&0o006 != 0 {
		return warn(CheckNodeSocket, "%s: mode %04o%s: every user may connect; only the node's allowed uids fence it (a mode of 0600 or 0660 with a group fences it too)", socket, perm, owner)
	}
	return ok(CheckNodeSocket, "%s: mode %04o%s", socket, perm, owner)
}

// attachFailure says why the attach failed, and what to change.
func attachFailure(socket string, err error, wait time.Duration) string {
	var refused *nodewire.RefusedError
	switch {
	case errors.Is(err, nodewire.ErrNotAllowed):
		return fmt.Sprintf("the node refused this user (uid %d): add it to the node's allowed uids (--allow-uid, [node] allow_uids): %v", os.Getuid(), err)
	case errors.Is(err, nodewire.ErrScope):
		return fmt.Sprintf("the node serves only engines that declare a scope (--require-scope, [node] require_scope) and the doctor declares none: the node is up and answered, but the doctor cannot attach to check it further: %v", err)
	case errors.Is(err, nodewire.ErrVersion):
		return fmt.Sprintf("the node speaks another protocol version than this doctor (%d): run a kvshare of the node's version: %v", nodewire.Version, err)
	case errors.As(err, &refused):
		return fmt.Sprintf("the node refused the hello: %v", err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("nothing listens at %s (a stale socket of a node that is gone?): %v", socket, err)
	case errors.Is(err, syscall.EACCES):
		return fmt.Sprintf("this user may not connect: the socket's mode or its directory keeps it out: %v", err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no welcome within %v: %v", wait, err)
	}
	return err.Error()
}

// nodeStats reports the node's counters: engines, what is lent and
// held, what was refused. Memory held for good warns: it is kept until
// a reclaim or the store lets go.
func nodeStats(st nodewire.StatsReply) Finding {
	line := fmt.Sprintf("%d engines attached (this one included); %d lends, %s lent; %d attempts in flight of %d; %d lookups; %d requests refused, %d peers refused, %d sessions ended by the node; %d reclaims (%s)",
		st.Engines, st.Lends, size(int64(st.LentBytes)), st.AttemptsOpen, st.Attempts, st.Lookups, st.Refusals, st.PeersRefused, st.Disconnects, st.Reclaims, size(int64(st.BytesReclaimed)))
	if st.HeldLends > 0 {
		return warn(CheckNodeStats, "%s; %d lends (%s) held for good: engines' memory whose access the node could not prove ended, kept mapped until a reclaim or the store lets go", line, st.HeldLends, size(int64(st.HeldBytes)))
	}
	return ok(CheckNodeStats, "%s", line)
}

// nodeLookup asks the node about a name of this run's own (the node
// puts its key prefix before it): any answer
// (Absent expected) proves the node reaches its store.
func nodeLookup(ctx context.Context, c *nodeclient.Client, wait time.Duration) Finding {
	p, err := runprefix.New("", "doctor")
	if err != nil {
		return fail(CheckNodeLookup, "%v", err)
	}
	name := []byte(p + "/node-probe")
	lctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	res, err := c.Lookup(lctx, contract.View{Groups: []contract.Group{{Names: [][]byte{name}}}}, nodeclient.LookupOptions{})
	if err != nil {
		return fail(CheckNodeLookup, "a lookup of %q was not answered: %v", name, err)
	}
	return ok(CheckNodeLookup, "%q: %v (the node asked its store and answered)", name, res.Rows[0])
}

// closedEarly reports whether the attach failed on a connection the
// node closed, without the client having read why.
func closedEarly(err error) bool {
	var refused *nodewire.RefusedError
	if errors.As(err, &refused) || errors.Is(err, nodewire.ErrVersion) {
		return false
	}
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, nodeclient.ErrClosed)
}

// goodbyeOnAttach connects once more, by hand, to read the goodbye a
// node that refuses a peer sends before reading a word (the client's
// hello may have failed first, the node having closed, or reset the
// connection, the hello unread): the goodbye, or nil when the node sends
// none within wait.
func goodbyeOnAttach(ctx context.Context, socket string, wait time.Duration) *nodewire.NodeGoodbye {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	raw, err := d.DialContext(dctx, "unix", socket)
	if err != nil {
		return nil
	}
	c := raw.(*net.UnixConn)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(wait))
	// Nothing is written: a node that refuses the peer speaks first, and
	// a close with the peer's bytes unread would reset the connection,
	// losing the goodbye.
	_, m, fd, err := nodewire.NewConn(c).ReadFrame(1 << 16)
	if fd >= 0 {
		_ = syscall.Close(fd)
	}
	if g, ok := m.(*nodewire.NodeGoodbye); ok && err == nil {
		return g
	}
	return nil
}
