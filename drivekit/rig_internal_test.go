package drivekit

import (
	"context"
	"log/slog"
	"sync"

	"github.com/kvshare/kvshare/contract"
)

// verdicts is a store for the kit's own tests that moves no byte: every
// row ends with the verdict set for its key (Ready by default, NotReady
// for an own write), a crash makes every call panic, and the keys in
// unprovable end Fault with access unprovable. It records the rows of
// each call. Its memory is never touched, so its regions need no
// mapping.
type verdicts struct {
	mu         sync.Mutex
	crash      bool
	status     map[string]contract.RowStatus
	unprovable map[string]bool
	calls      [][]string // the keys of each call, in order
}

func (v *verdicts) Transfer(c *Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.calls = append(v.calls, append([]string(nil), c.Keys...))
	if v.crash {
		panic("staged crash")
	}
	for i, k := range c.Keys {
		c.Ends[i].Status = contract.Ready
		if st, ok := v.status[k]; ok {
			c.Ends[i].Status = st
		}
		if v.unprovable[k] {
			c.Ends[i] = End{Status: contract.Fault, Unprovable: true}
		}
		if c.OwnWrite[i] {
			c.Ends[i].Status = contract.NotReady
		}
	}
}

// callKeys returns the keys of each call so far.
func (v *verdicts) callKeys() [][]string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.calls
}

// tearing is a verdicts store with a client to tear down: Teardown
// answers err and counts itself.
type tearing struct {
	*verdicts
	err       error
	teardowns int
}

func (t *tearing) Teardown(context.Context, []contract.SlotRegion) error {
	t.teardowns++
	return t.err
}

// rigRegion is a region of eight 64-byte slots at an address nothing
// maps: the verdicts store never touches it.
var rigRegion = contract.SlotRegion{Base: 1 << 40, Len: 512, SlotBytes: 64, SlotCount: 8, Kind: contract.Host}

// plainKeys makes a name its own key.
type plainKeys struct{}

func (plainKeys) AppendKey(dst, name []byte) []byte { return append(dst, name...) }
func (plainKeys) KeyLen(n int) int                  { return n }

// oneRow is a batch of one row named "k" over slot.
func oneRow(slot contract.Span) contract.RowBatch {
	return contract.RowBatch{Keys: plainKeys{}, Rows: []contract.Row{{Name: []byte("k"), Spans: []contract.Span{slot}}}}
}

// rows is a batch of one row per name, row i over slot i of rigRegion.
func rows(names ...string) contract.RowBatch {
	b := contract.RowBatch{Keys: plainKeys{}}
	for i, n := range names {
		b.Rows = append(b.Rows, contract.Row{Name: []byte(n), Spans: []contract.Span{rigRegion.Slot(i)}})
	}
	return b
}

// newRig returns a driver of one worker over s, with rigRegion
// registered.
func newRig(s Store) (*Driver, contract.Registration, error) {
	return newRigWith(s, Options{Workers: 1})
}

// newRigWith is newRig with options o (Name, Cancel and a quiet logger
// set).
func newRigWith(s Store, o Options) (*Driver, contract.Registration, error) {
	o.Name, o.Caps.Cancel, o.Logger = "rig", true, slog.New(slog.DiscardHandler)
	d := New(s, o)
	reg, err := d.Register(rigRegion)
	return d, reg, err
}
