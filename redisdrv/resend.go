package redisdrv

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
)

// Resending after a dead connection.
//
// The client's stream pool (rueidis's spool) hands out the connection it
// stored last and drops one only once it knows it failed. A connection
// that sat idle in the pool while the server restarted, or closed it for
// being idle (timeout in redis.conf), is handed out as if alive, and the
// pipeline sent on it reads EOF (or a reset, or a broken pipe) before its
// first reply. Every connection idle across that event is dead alike, so
// the send that replaces it may get the next one.
//
// The pool dials only when it has no connection idle, so it holds no
// more connections than the driver's workers ever held at once (its
// size, at least Workers, caps it too), and each found dead is closed.
// So at most maxResends sends of a part's rows can meet connections that
// were idle across one event, and the send after them gets a connection
// dialed after it.

// maxResends is how many connections of one client's stream pool the
// driver's workers can hold at once: one a worker on one server; on a
// cluster two of one node (a redirect round sends the rows a node was
// named for by MOVED and those named by ASK as two pipelines at once).
func (s *store) maxResends() int {
	if s.route.cluster {
		return 2 * s.cfg.Workers
	}
	return s.cfg.Workers
}

// resending sends g's rows with send, again each time send reports the
// connection found dead before its first reply (nothing recorded, no
// byte of a get written), at most maxResends times; the last send
// records whatever it met. deadBeforeReply stops it once the part's time
// is up.
func (s *store) resending(ctx context.Context, p *part, g *nodeRows, send func(context.Context, *part, *nodeRows, bool) bool) {
	resends, most := 0, s.maxResends()
	for send(ctx, p, g, resends < most) {
		resends++
	}
	g.resends += int64(resends)
	if resends > 1 {
		args := []any{"dir", p.dir, "rows", len(g.rows), "sends", resends + 1}
		if g.addr != "" {
			args = append(args, "node", g.addr)
		}
		s.log.Info("redisdrv: pooled connections found dead one after another (a server restart, or idle connections closed); the pipeline went again each time", args...)
	}
}

// deadBeforeReply reports whether err, a pipeline's first reply, says
// its connection was closed by the other side (EOF, a reset, a broken
// pipe) while the part still had time: not a timeout, not an answer of
// the server.
func deadBeforeReply(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)
}
