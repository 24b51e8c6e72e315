package drivekit

import (
	"log/slog"
	"sync"

	"github.com/kvshare/kvshare/contract"
)

// verdicts is a store for the kit's own tests that moves no byte: every
// row ends with the verdict set for its direction (Ready by default),
// and a crash makes every call panic. Its memory is never touched, so
// its regions need no mapping.
type verdicts struct {
	mu    sync.Mutex
	crash bool
	calls int
}

func (v *verdicts) Transfer(c *Call) {
	v.mu.Lock()
	v.calls++
	crash := v.crash
	v.mu.Unlock()
	if crash {
		panic("staged crash")
	}
	for i := range c.Ends {
		c.Ends[i].Status = contract.Ready
		if c.OwnWrite[i] {
			c.Ends[i].Status = contract.NotReady
		}
	}
}

// rigRegion is a region of one 64-byte slot at an address nothing maps:
// the verdicts store never touches it.
var rigRegion = contract.SlotRegion{Base: 1 << 40, Len: 64, SlotBytes: 64, SlotCount: 1, Kind: contract.Host}

// plainKeys makes a name its own key.
type plainKeys struct{}

func (plainKeys) AppendKey(dst, name []byte) []byte { return append(dst, name...) }
func (plainKeys) KeyLen(n int) int                  { return n }

// oneRow is a batch of one row named "k" over slot.
func oneRow(slot contract.Span) contract.RowBatch {
	return contract.RowBatch{Keys: plainKeys{}, Rows: []contract.Row{{Name: []byte("k"), Spans: []contract.Span{slot}}}}
}

// newRig returns a driver of one worker over a verdicts store, with
// rigRegion registered.
func newRig(v *verdicts) (*Driver, contract.Registration, error) {
	d := New(v, Options{Name: "rig", Workers: 1, Caps: contract.Capabilities{Cancel: true}, Logger: slog.New(slog.DiscardHandler)})
	reg, err := d.Register(rigRegion)
	return d, reg, err
}
