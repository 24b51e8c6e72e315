package node

import (
	"io"
	"net"
	"time"
)

// GoodbyeLinger bounds how long the node, having said goodbye to a
// session it ends (a refused peer, a protocol error, a slow reader, a
// shutdown), keeps reading what the peer still sends before it closes.
// Closing a Unix stream socket with bytes unread resets the connection,
// and a peer reset that way loses the goodbye still unread on its side
// — the one frame that says why. So the node shuts its side for
// writing (the peer reads the goodbye, then end of stream), discards
// what arrives until the peer closes, this long passes, or
// goodbyeLingerBytes were read, and only then closes.
const GoodbyeLinger = time.Second

// goodbyeLingerBytes caps what a lingering close reads: a peer that
// keeps sending is closed on anyway.
const goodbyeLingerBytes = 4 << 20

// lingerClose closes c after a goodbye as GoodbyeLinger says.
func lingerClose(c *net.UnixConn) {
	_ = c.CloseWrite()
	_ = c.SetReadDeadline(time.Now().Add(GoodbyeLinger))
	_, _ = io.Copy(io.Discard, io.LimitReader(c, goodbyeLingerBytes))
	_ = c.Close()
}
