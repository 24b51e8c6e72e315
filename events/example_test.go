package events_test

import (
	"context"
	"fmt"

	"github.com/kvshare/kvshare/events"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/patience"
)

// A publisher told a block stored, then that block and one never
// announced found absent, publishes on the scope's topic:
// AllBlocksCleared (its first), BlockStored, and BlockRemoved for the
// announced block alone (in one batch, or two should a window end
// between the calls).
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Wait())
	defer cancel()
	p, err := events.Open(events.Config{Endpoint: "tcp://127.0.0.1:0", Medium: "kvshare:embedded"})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	scope := keys.Scope{Model: "m", Revision: "r", KVDType: "bf16", TokensPerBlock: 16, KVHeads: 8, HeadDim: 128,
		Layers: 32, TPSize: 1, PPSize: 1, HashAlgorithm: "sha256-cbor"}
	digest, _ := scope.Digest()
	p.Stored(scope, digest, [][]byte{[]byte("block-1")})
	p.Absent(scope, digest, [][]byte{[]byte("block-1"), []byte("never-stored")})
	if err := p.Flush(ctx); err != nil {
		panic(err)
	}
	s := p.Stats()
	fmt.Println("events:", s.Events, "dropped:", s.Dropped)
	// Output:
	// events: 3 dropped: 0
}
