package redisdrv

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
)

// rig is a driver over a test's server (or a proxy in front of it), one
// region of slots lent to it, and the stem its keys are made with.
type rig struct {
	t        *testing.T
	s        *server
	d        *Driver
	mem      []byte
	reg      contract.Registration
	slot     int64
	stem     keys.Stem
	prefix   string
	marks    map[int][]byte // slots sealed at their access end: the mark written then
	closedUp bool
}

func newRig(t *testing.T, s *server, addr string, slots int, slotBytes int64, cfg Config) *rig {
	t.Helper()
	return rigOver(t, s, driverVia(t, addr, cfg), slots, slotBytes)
}

// rigOver is a rig over driver d (s may be nil: a cluster's rig).
func rigOver(t *testing.T, s *server, d *Driver, slots int, slotBytes int64) *rig {
	t.Helper()
	prefix := fmt.Sprintf("kvshare-test/%s/%d", t.Name(), time.Now().UnixNano())
	stem, err := keys.NewStem(prefix)
	require.NoError(t, err)
	r := &rig{t: t, s: s, d: d, mem: make([]byte, int64(slots)*slotBytes), slot: slotBytes,
		stem: stem, prefix: prefix, marks: map[int][]byte{}}
	r.reg, err = r.d.Register(contract.SlotRegion{Base: spanBase(r.mem), SlotBytes: slotBytes, SlotCount: slots, Len: int64(len(r.mem)), Kind: contract.Host})
	require.NoError(t, err)
	t.Cleanup(r.close)
	return r
}

// close unregisters, drains and closes the driver, unless the test did.
func (r *rig) close() {
	if r.closedUp {
		return
	}
	r.closedUp = true
	ctx, cancel := bound(r.t, 30*time.Second, "the closing Drain").Context(context.Background())
	defer cancel()
	if !r.d.Drain(ctx) {
		r.t.Errorf("Drain answered false at the end of the test: the region is kept")
		return
	}
	assert.NoError(r.t, r.d.Unregister(r.reg))
	assert.NoError(r.t, r.d.Close())
}

func (r *rig) slotBytes(i int) []byte { return r.mem[int64(i)*r.slot : int64(i+1)*r.slot] }

// key is the store key of name.
func (r *rig) key(name string) string {
	k, err := r.stem.Key([]byte(name))
	require.NoError(r.t, err)
	return k
}

// batch is one row a name, row i in slot slots[i].
func (r *rig) batch(names []string, slots []int) contract.RowBatch {
	b := contract.RowBatch{Keys: r.stem}
	for i, n := range names {
		b.Rows = append(b.Rows, contract.Row{Name: []byte(n),
			Spans: []contract.Span{{Addr: spanBase(r.mem) + uintptr(int64(slots[i])*r.slot), Len: r.slot}}})
	}
	return b
}

// fill writes a pattern of its own into each slot.
func (r *rig) fill(slots ...int) {
	for _, i := range slots {
		b := r.slotBytes(i)
		for j := range b {
			b[j] = byte(i*31 + j*7 + 1)
		}
	}
}

// start admits a put or get of names in slots.
func (r *rig) start(dir contract.Direction, names []string, slots []int) contract.Operation {
	r.t.Helper()
	b := r.batch(names, slots)
	var op contract.Operation
	var err error
	if dir == contract.PutDir {
		op, err = r.d.Put(b, nil)
	} else {
		op, err = r.d.Get(b, nil, nil)
	}
	require.NoError(r.t, err)
	return op
}

// settle waits (bounded) for op's access to leave Open, then seals the
// slots of its rows: a mark written over each, which must stand to the
// end of the test.
func (r *rig) settle(op contract.Operation, slots []int) contract.OpState {
	r.t.Helper()
	ctx, cancel := bound(r.t, 60*time.Second, "an operation settling").Context(context.Background())
	defer cancel()
	for {
		st := op.Poll(nil)
		if st.Access != contract.Open {
			if st.Access == contract.Ended {
				r.seal(slots...)
			}
			return st
		}
		require.NoError(r.t, ctx.Err(), "the operation's access did not end within its bound (60 s scaled, extended only while the process was starved): %v", st)
		time.Sleep(2 * time.Millisecond)
	}
}

// run admits and settles.
func (r *rig) run(dir contract.Direction, names []string, slots []int) contract.OpState {
	r.t.Helper()
	return r.settle(r.start(dir, names, slots), slots)
}

func (r *rig) seal(slots ...int) {
	for _, i := range slots {
		b := r.slotBytes(i)
		mark := bytes.Repeat([]byte{0xA5, byte(i)}, len(b)/2)
		copy(b, mark)
		r.marks[i] = mark
	}
}

// sealsHold checks that no slot sealed at its access end changed since.
func (r *rig) sealsHold() {
	r.t.Helper()
	for i, mark := range r.marks {
		assert.True(r.t, bytes.Equal(mark, r.slotBytes(i)[:len(mark)]), "slot %d changed after its operation's access ended", i)
	}
}

// lookup asks about names.
func (r *rig) lookup(ctx context.Context, names ...string) []contract.Presence {
	r.t.Helper()
	b := contract.LookupBatch{Keys: r.stem}
	for _, n := range names {
		b.Names = append(b.Names, []byte(n))
	}
	got, err := r.d.Lookup(ctx, b, nil)
	require.NoError(r.t, err)
	return got
}

func seq(lo, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = lo + i
	}
	return s
}

func names(stem string, n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("%s-%d", stem, i)
	}
	return s
}

func statuses(st contract.OpState, want contract.RowStatus) int {
	n := 0
	for _, s := range st.Rows {
		if s == want {
			n++
		}
	}
	return n
}
