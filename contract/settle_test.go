package contract_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/kvshare/kvshare/contract"
)

// stepAttempt is an attempt whose outcome and quiescence the test sets,
// one after the other.
type stepAttempt struct {
	outcome     contract.Outcome
	known, done chan struct{}
}

func newStepAttempt(o contract.Outcome) *stepAttempt {
	return &stepAttempt{outcome: o, known: make(chan struct{}), done: make(chan struct{})}
}

func (a *stepAttempt) learn()   { close(a.known) }
func (a *stepAttempt) quiesce() { close(a.done) }

func (a *stepAttempt) Outcome() (contract.Outcome, bool) {
	select {
	case <-a.known:
		return a.outcome, true
	default:
		return contract.Outcome{}, false
	}
}
func (a *stepAttempt) Known() <-chan struct{} { return a.known }
func (a *stepAttempt) Wait(ctx context.Context) (contract.Outcome, error) {
	select {
	case <-a.known:
		return a.outcome, nil
	case <-ctx.Done():
		return contract.Outcome{}, ctx.Err()
	}
}
func (a *stepAttempt) Quiesced() bool {
	select {
	case <-a.done:
		return true
	default:
		return false
	}
}
func (a *stepAttempt) Cancel()               {}
func (a *stepAttempt) Done() <-chan struct{} { return a.done }

func TestSettleWaitsForQuiescenceNotJustTheOutcome(t *testing.T) {
	want := contract.Outcome{Delivered: []bool{true, false}, Rows: []contract.RowStatus{contract.Ready, contract.Miss}}
	a := newStepAttempt(want)
	a.learn() // the outcome is known, the slots still lent

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := contract.Settle(ctx, a)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Settle on an attempt not quiesced: err %v, want context.Canceled", err)
	}
	if !slices.Equal(got.Delivered, want.Delivered) {
		t.Fatalf("Settle with ctx ended after the outcome: outcome %v, want the known one %v", got, want)
	}

	settled := make(chan error, 1)
	go func() {
		_, err := contract.Settle(context.Background(), a)
		settled <- err
	}()
	a.quiesce()
	if err := <-settled; err != nil {
		t.Fatalf("Settle after quiescence: %v", err)
	}
	got, err = contract.Settle(context.Background(), a)
	if err != nil || !slices.Equal(got.Rows, want.Rows) {
		t.Fatalf("Settle of a quiesced attempt = %v, %v; want %v, nil", got, err, want)
	}
}

func TestSettleBeforeTheOutcomeGivesNoOutcome(t *testing.T) {
	a := newStepAttempt(contract.Outcome{Delivered: []bool{true}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := contract.Settle(ctx, a)
	if !errors.Is(err, context.Canceled) || got.Delivered != nil {
		t.Fatalf("Settle before any outcome = %v, %v; want the zero outcome and context.Canceled", got, err)
	}
}

func TestOutcomeCount(t *testing.T) {
	o := contract.Outcome{Rows: []contract.RowStatus{contract.Ready, contract.Miss, contract.Ready, contract.Fault, contract.Cancelled}}
	for _, c := range []struct {
		s    contract.RowStatus
		want int
	}{
		{contract.Ready, 2}, {contract.Miss, 1}, {contract.Fault, 1}, {contract.Cancelled, 1}, {contract.NotReady, 0}, {contract.Pending, 0},
	} {
		if got := o.Count(c.s); got != c.want {
			t.Errorf("Count(%v) = %d, want %d", c.s, got, c.want)
		}
	}
	if n := (contract.Outcome{}).Count(contract.Ready); n != 0 {
		t.Errorf("Count of the zero outcome = %d", n)
	}
}

func twoLayers(blocks int) contract.View {
	v := contract.View{}
	for layer := range 2 {
		g := contract.Group{Region: layer}
		for b := range blocks {
			g.Slots = append(g.Slots, int32(10*layer+b))
			g.Names = append(g.Names, fmt.Appendf(nil, "L%d/b%d", layer, b))
		}
		v.Groups = append(v.Groups, g)
	}
	return v
}

func TestCutAndRestSplitEveryGroup(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 3, 4, 9} {
		v := twoLayers(4)
		head, rest := v.Cut(n), v.Rest(n)
		k := min(max(n, 0), 4)
		for i, g := range v.Groups {
			h, r := head.Groups[i], rest.Groups[i]
			if h.Region != g.Region || r.Region != g.Region {
				t.Fatalf("n=%d: group %d changed region", n, i)
			}
			if !slices.Equal(h.Slots, g.Slots[:k]) || len(h.Names) != k || !slices.Equal(r.Slots, g.Slots[k:]) || len(r.Names) != 4-k {
				t.Fatalf("n=%d group %d: Cut %v / Rest %v of %v", n, i, h.Slots, r.Slots, g.Slots)
			}
		}
		if head.Rows()+rest.Rows() != v.Rows() {
			t.Fatalf("n=%d: Cut and Rest hold %d+%d rows of %d", n, head.Rows(), rest.Rows(), v.Rows())
		}
	}
}

func TestCutNeverLetsAnAppendReachTheRest(t *testing.T) {
	v := twoLayers(4)
	head := v.Cut(2)
	head.Groups[0].Slots = append(head.Groups[0].Slots, 99)
	if v.Groups[0].Slots[2] != 2 {
		t.Fatalf("an append to a cut view wrote into the original: %v", v.Groups[0].Slots)
	}
}

func TestCutOfALookupViewOfNamesAlone(t *testing.T) {
	v := contract.View{Groups: []contract.Group{{Names: [][]byte{[]byte("a"), []byte("b"), []byte("c")}}}}
	if got := v.Cut(2); len(got.Groups[0].Names) != 2 || len(got.Groups[0].Slots) != 0 {
		t.Fatalf("Cut(2) of names alone = %+v", got)
	}
	if got := v.Rest(2); len(got.Groups[0].Names) != 1 {
		t.Fatalf("Rest(2) of names alone = %+v", got)
	}
}

func ExampleView_Cut() {
	// Two layers of four blocks; a lookup found the first three of every
	// layer: fetch those, compute the fourth.
	v := contract.View{Groups: []contract.Group{
		{Region: 0, Slots: []int32{0, 1, 2, 3}, Names: [][]byte{[]byte("a0"), []byte("b0"), []byte("c0"), []byte("d0")}},
		{Region: 1, Slots: []int32{0, 1, 2, 3}, Names: [][]byte{[]byte("a1"), []byte("b1"), []byte("c1"), []byte("d1")}},
	}}
	fmt.Println("fetch:", v.Cut(3).Rows(), "rows; compute:", v.Rest(3).Rows(), "rows")
	fmt.Printf("computed names: %s %s\n", v.Rest(3).Groups[0].Names[0], v.Rest(3).Groups[1].Names[0])
	// Output:
	// fetch: 6 rows; compute: 2 rows
	// computed names: d0 d1
}
