package contract_test

import (
	"math/rand/v2"
	"testing"
	"testing/quick"

	"github.com/kvshare/kvshare/contract"
)

// resumeModel is the resume bound by its definition: the number of
// leading blocks b such that block b arrived in every layer (group).
func resumeModel(v contract.View, o contract.Outcome) int {
	if len(v.Groups) == 0 {
		return 0
	}
	for b := 0; ; b++ {
		base := 0
		for _, g := range v.Groups {
			row := base + b
			if b >= len(g.Slots) || row >= len(o.Delivered) || !o.Delivered[row] {
				return b
			}
			base += len(g.Slots)
		}
	}
}

// randomView makes up to five groups of up to nine rows (the same length
// in every group when sameLen), and an outcome whose delivered flags are
// mostly true, possibly shorter than the view.
func randomView(r *rand.Rand, sameLen bool) (contract.View, contract.Outcome) {
	var v contract.View
	n := r.IntN(10)
	for range r.IntN(6) {
		if !sameLen {
			n = r.IntN(10)
		}
		v.Groups = append(v.Groups, contract.Group{Slots: make([]int32, n), Names: make([][]byte, n)})
	}
	rows := v.Rows()
	if r.IntN(8) == 0 && rows > 0 {
		rows = r.IntN(rows)
	}
	o := contract.Outcome{Delivered: make([]bool, rows)}
	for i := range o.Delivered {
		o.Delivered[i] = r.IntN(6) != 0
	}
	return v, o
}

func TestResumeBoundIsTheModel(t *testing.T) {
	for _, sameLen := range []bool{true, false} {
		prop := func(seed uint64) bool {
			v, o := randomView(rand.New(rand.NewPCG(seed, 1)), sameLen)
			return v.ResumeBound(o) == resumeModel(v, o)
		}
		if err := quick.Check(prop, &quick.Config{MaxCount: 5000}); err != nil {
			t.Errorf("same length %v: %v", sameLen, err)
		}
	}
}

// Prefix counts the first layer whole; the resume bound does not.
func TestResumeBoundAgainstPrefix(t *testing.T) {
	v := contract.View{Groups: []contract.Group{{Slots: make([]int32, 3)}, {Slots: make([]int32, 3)}}}
	o := contract.Outcome{Delivered: []bool{true, true, true, true, false, true}}
	if got := v.ResumeBound(o); got != 1 {
		t.Errorf("ResumeBound = %d, want 1", got)
	}
	if got := o.Prefix(); got != 4 {
		t.Errorf("Prefix = %d, want 4", got)
	}
	if got := (contract.View{}).ResumeBound(o); got != 0 {
		t.Errorf("no groups: ResumeBound = %d, want 0", got)
	}
	empty := contract.View{Groups: []contract.Group{{}, {}}}
	if got := empty.ResumeBound(contract.Outcome{}); got != 0 {
		t.Errorf("empty groups: ResumeBound = %d, want 0", got)
	}
}

// The loop the typed RowStatusCount is for.
func TestEveryFinalStatus(t *testing.T) {
	var names []string
	for s := contract.Ready; s < contract.RowStatusCount; s++ {
		names = append(names, s.String())
	}
	want := []string{"ready", "miss", "not-ready", "declined", "fault", "cancelled"}
	if len(names) != len(want) {
		t.Fatalf("statuses %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("status %d is %q, want %q", i, names[i], want[i])
		}
	}
}

func TestPresenceNames(t *testing.T) {
	for p, want := range map[contract.Presence]string{contract.Unknown: "unknown", contract.Present: "present",
		contract.Absent: "absent", contract.InFlight: "in-flight", 9: "Presence(9)"} {
		if got := p.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", p, got, want)
		}
	}
	var zero contract.Presence
	if zero != contract.Unknown {
		t.Error("the zero Presence is not Unknown")
	}
}

func TestPresentBound(t *testing.T) {
	v := contract.View{Groups: []contract.Group{{Names: make([][]byte, 3)}, {Names: make([][]byte, 3)}}}
	p, a := contract.Present, contract.Absent
	if got := v.PresentBound([]contract.Presence{p, p, p, p, a, p}); got != 1 {
		t.Errorf("PresentBound = %d, want 1", got)
	}
	if got := v.PresentBound([]contract.Presence{p, p, p, p, p, p}); got != 3 {
		t.Errorf("PresentBound = %d, want 3", got)
	}
	if got := v.PresentBound([]contract.Presence{p, p, contract.InFlight, p, p, p}); got != 2 {
		t.Errorf("in flight is not present: PresentBound = %d, want 2", got)
	}
	if got := v.PresentBound(nil); got != 0 {
		t.Errorf("no answer: PresentBound = %d, want 0", got)
	}
}
