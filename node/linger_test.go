package node

import (
	"context"
	"log/slog"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/patience"
)

// TestARefusedPeerReadsWhy: a peer the node refuses has already written
// its hello when the goodbye comes; the node reads it (lingering) before
// it closes, so the peer's Dial reads the goodbye and answers
// ErrNotAllowed every time — never a reset that throws the goodbye away.
func TestARefusedPeerReadsWhy(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.AllowUIDs = []uint32{uint32(os.Getuid() + 1)} })
	const dials = 20
	for i := range dials {
		ctx, cancel := patience.For(t).Context(context.Background())
		c, err := nodeclient.Dial(ctx, f.path, nodeclient.Options{Engine: "refused", Logger: slog.New(slog.DiscardHandler)})
		cancel()
		if c != nil {
			_ = c.Close(context.Background())
		}
		require.ErrorIsf(t, err, nodewire.ErrNotAllowed, "dial %d", i)
		require.Containsf(t, err.Error(), "peer.uid", "dial %d", i)
	}
	f.waitNode("every refused peer counted", func(s Stats) bool { return s.PeersRefused == dials })
}
