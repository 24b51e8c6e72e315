package bench

import (
	"encoding/binary"
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// shape is one tick of submissions: Submissions views of Rows rows,
// submitted at once.
type shape struct {
	Submissions int
	Rows        int
}

// settleShapes are those the Python implementation kvshare descends from
// measured settle at: 1×256, 4×256 (concurrent) and 1×4096.
var settleShapes = []shape{{1, 256}, {4, 256}, {1, 4096}}

func (s shape) String() string { return fmt.Sprintf("%dx%d", s.Submissions, s.Rows) }

// total is the rows of one tick.
func (s shape) total() int { return s.Submissions * s.Rows }

// rowName is the name of row i of a set (a kind byte and the index):
// what an engine's block hash is to kvshare, opaque bytes.
func rowName(kind byte, i int) []byte {
	n := make([]byte, 16)
	n[0] = kind
	binary.BigEndian.PutUint64(n[8:], uint64(i))
	return n
}

// rowNames are the names of rows [0, n) of a set.
func rowNames(kind byte, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = rowName(kind, i)
	}
	return out
}

// view is the view of rows [lo, hi) of names, in slots base+lo ….
func view(names [][]byte, lo, hi, base int) contract.View {
	g := contract.Group{Slots: make([]int32, 0, hi-lo), Names: make([][]byte, 0, hi-lo)}
	for i := lo; i < hi; i++ {
		g.Slots = append(g.Slots, int32(base+i))
		g.Names = append(g.Names, names[i])
	}
	return contract.View{Groups: []contract.Group{g}}
}

// views cuts rows [0, n) of names into views of per rows, in slots
// base+i.
func views(names [][]byte, n, per, base int) []contract.View {
	var out []contract.View
	for lo := 0; lo < n; lo += per {
		out = append(out, view(names, lo, min(lo+per, n), base))
	}
	return out
}

// delivered counts the rows an outcome marks delivered.
func delivered(o contract.Outcome) int {
	n := 0
	for _, d := range o.Delivered {
		if d {
			n++
		}
	}
	return n
}
