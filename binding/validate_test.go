package binding

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

func TestBadSubmissionsNeverReachTheDriver(t *testing.T) {
	names := func(ns ...string) [][]byte {
		out := make([][]byte, len(ns))
		for i, n := range ns {
			out[i] = []byte(n)
		}
		return out
	}
	group := func(region int, slots []int32, ns ...string) contract.Group {
		return contract.Group{Region: region, Slots: slots, Names: names(ns...)}
	}
	ok := group(0, []int32{0, 1}, "a", "b")
	view := func(gs ...contract.Group) contract.View { return contract.View{Groups: gs} }
	long := bytes.Repeat([]byte{'x'}, 513)
	huge := bytes.Repeat([]byte{'y'}, 100_000)

	// regions: 0 host (16 slots), 1 device (not served), 2 host (16 slots)
	type submit struct {
		dir  direction
		caps contract.Capabilities
		v    contract.View
		hint contract.Hint
		dest contract.Destination
	}
	cases := []struct {
		name     string
		s        submit
		group    int
		row      int
		contains string
	}{
		{"region negative", submit{v: view(group(-1, []int32{0}, "a"))}, 0, -1, "region -1 out of range"},
		{"region past the end", submit{v: view(group(3, []int32{0}, "a"))}, 0, -1, "region 3 out of range"},
		{"region far past the end", submit{v: view(group(1000, []int32{0}, "a"))}, 0, -1, "region 1000 out of range"},
		{"region not served (device)", submit{v: view(group(1, []int32{0}, "a"))}, 0, -1, "region 1 is device memory"},
		{"second group's region not served", submit{v: view(ok, group(1, []int32{0}, "a"))}, 1, -1, "region 1 is device memory"},
		{"publish into an unserved region", submit{dir: publish, v: view(group(1, []int32{0}, "a"))}, 0, -1, "region 1 is device memory"},
		{"more slots than names", submit{v: view(group(0, []int32{0, 1}, "a"))}, 0, -1, "2 slots but 1 names"},
		{"more names than slots", submit{v: view(group(0, []int32{0}, "a", "b"))}, 0, -1, "1 slots but 2 names"},
		{"names without slots", submit{v: view(group(0, nil, "a"))}, 0, -1, "0 slots but 1 names"},
		{"third group's lengths differ", submit{v: view(ok, group(2, []int32{5}, "c"), group(0, []int32{9, 10}, "d"))}, 2, -1, "2 slots but 1 names"},
		{"slot negative", submit{v: view(group(0, []int32{-1}, "a"))}, 0, 0, "slot -1 out of range [0, 16)"},
		{"slot equal to the count", submit{v: view(group(0, []int32{16}, "a"))}, 0, 0, "slot 16 out of range"},
		{"slot far out", submit{v: view(group(0, []int32{1 << 30}, "a"))}, 0, 0, "out of range"},
		{"slot out in the third row", submit{v: view(group(0, []int32{0, 1, 99}, "a", "b", "c"))}, 0, 2, "slot 99"},
		{"slot out in the second group", submit{v: view(ok, group(2, []int32{3, 16}, "c", "d"))}, 1, 1, "slot 16 out of range [0, 16) of region 2"},
		{"publish slot out of range", submit{dir: publish, v: view(group(0, []int32{17}, "a"))}, 0, 0, "slot 17"},
		{"nil name", submit{v: view(contract.Group{Slots: []int32{0, 1}, Names: [][]byte{[]byte("a"), nil}})}, 0, 1, "name of 0 bytes"},
		{"empty name", submit{v: view(contract.Group{Slots: []int32{0}, Names: [][]byte{{}}})}, 0, 0, "name of 0 bytes"},
		{"name one byte too long", submit{v: view(contract.Group{Slots: []int32{0}, Names: [][]byte{long}})}, 0, 0, "name of 513 bytes, want 1 to 512"},
		{"huge name", submit{v: view(ok, contract.Group{Slots: []int32{0}, Names: [][]byte{huge}})}, 1, 0, "name of 100000 bytes"},
		{"publish empty name", submit{dir: publish, v: view(contract.Group{Slots: []int32{0}, Names: [][]byte{nil}})}, 0, 0, "name of 0 bytes"},
		{"fetch repeats a slot", submit{v: view(group(0, []int32{3, 4, 3}, "a", "b", "c"))}, 0, 2, "slot 3 of region 0 is already fetched into by group 0 row 0"},
		{"fetch repeats a slot across groups", submit{v: view(group(2, []int32{7}, "a"), ok, group(2, []int32{1, 7}, "b", "c"))}, 2, 1, "already fetched into by group 0 row 0"},
		{"fetch repeats a slot of the group before", submit{v: view(ok, group(2, []int32{7}, "a"), group(2, []int32{1, 7}, "b", "c"))}, 2, 1, "already fetched into by group 1 row 0"},
		{"fetch repeats a later row of an earlier group", submit{v: view(group(0, []int32{9, 3}, "a", "b"), group(0, []int32{3}, "c"))}, 1, 0, "slot 3 of region 0 is already fetched into by group 0 row 1"},
		{"fetch hint without Hints", submit{v: view(ok), hint: "pool-a"}, -1, -1, "fetch hint of type string"},
		{"fetch hint of zero value", submit{v: view(ok), hint: 0}, -1, -1, "fetch hint of type int"},
		{"publish destination", submit{dir: publish, v: view(ok), dest: "segment-3"}, -1, -1, "publish destination of type string"},
		{"publish to a get-only driver", submit{dir: publish, caps: contract.Capabilities{Get: true}, v: view(ok)}, -1, -1, "serves no puts"},
		{"fetch from a put-only driver", submit{caps: contract.Capabilities{Put: true}, v: view(ok)}, -1, -1, "serves no gets"},
	}
	require.GreaterOrEqual(t, len(cases), 25)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			caps := tc.s.caps
			if caps == (contract.Capabilities{}) {
				caps = getPut
			}
			d := newFake(caps)
			r, err := Bind(d, []contract.SlotRegion{
				fakeRegion(0, contract.Host), fakeRegion(1, contract.Device), fakeRegion(2, contract.Host),
			}, &countingHold{})
			require.NoError(t, err)
			b, err := New(r, Config{KeyPrefix: "t", Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			var a contract.Attempt
			if tc.s.dir == publish {
				a, err = b.Publish(tc.s.v, tc.s.dest)
			} else {
				a, err = b.Fetch(tc.s.v, tc.s.hint)
			}
			require.ErrorIs(t, err, contract.ErrInvalidSubmission)
			assert.Nil(t, a)
			var se *SubmissionError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.group, se.Group, "group named")
			assert.Equal(t, tc.row, se.Row, "row named")
			assert.ErrorContains(t, err, tc.contains)
			assert.Zero(t, d.Calls(), "nothing reached the driver")
			assert.Zero(t, b.Stats().Attempts)
		})
	}
}

// A submission error names the group and the row when they are known
// (-1 when not), the first group and row (0) included.
func TestSubmissionErrorText(t *testing.T) {
	cases := []struct {
		group, row int
		want       string
	}{
		{1, 3, "kvshare: invalid submission: group 1 row 3: why"},
		{0, 0, "kvshare: invalid submission: group 0 row 0: why"},
		{0, 5, "kvshare: invalid submission: group 0 row 5: why"},
		{4, 0, "kvshare: invalid submission: group 4 row 0: why"},
		{2, -1, "kvshare: invalid submission: group 2: why"},
		{0, -1, "kvshare: invalid submission: group 0: why"},
		{-1, -1, "kvshare: invalid submission: why"},
	}
	for _, tc := range cases {
		assert.EqualError(t, invalid(tc.group, tc.row, "%s", "why"), tc.want)
	}
}

// A protocol violation names the rule and the call, and the detail only
// when there is one.
func TestViolationErrorText(t *testing.T) {
	cases := []struct {
		v    ViolationError
		want string
	}{
		{ViolationError{Rule: "Put panicked", Call: "attempt 1 (publish) group 0 rows [0, 2)", Detail: "boom"},
			"kvshare/binding: driver broke the protocol: Put panicked (attempt 1 (publish) group 0 rows [0, 2)): boom"},
		{ViolationError{Rule: "a final row status changed", Call: "attempt 2 (fetch) group 1 rows [4, 8)"},
			"kvshare/binding: driver broke the protocol: a final row status changed (attempt 2 (fetch) group 1 rows [4, 8))"},
	}
	for _, tc := range cases {
		assert.EqualError(t, &tc.v, tc.want)
	}
}

func TestAPublishMayRepeatASlot(t *testing.T) {
	d := newFake(getPut)
	b, _ := fakeBackend(t, d, 1, Config{})
	v := contract.View{Groups: []contract.Group{{Slots: []int32{3, 3}, Names: [][]byte{[]byte("a"), []byte("b")}}}}
	_, err := b.Publish(v, nil)
	require.NoError(t, err, "the same bytes under two keys")
	// and a refused fetch leaves no trace in the slot set
	_, err = b.Fetch(contract.View{Groups: []contract.Group{{Slots: []int32{1, 2, 1}, Names: [][]byte{[]byte("a"), []byte("b"), []byte("c")}}}}, nil)
	require.ErrorIs(t, err, contract.ErrInvalidSubmission)
	_, err = b.Fetch(contract.View{Groups: []contract.Group{{Slots: []int32{1, 2}, Names: [][]byte{[]byte("a"), []byte("b")}}}}, nil)
	require.NoError(t, err)
	_, err = b.Fetch(contract.View{Groups: []contract.Group{{Slots: []int32{2, 1}, Names: [][]byte{[]byte("a"), []byte("b")}}}}, nil)
	require.NoError(t, err)
}

func TestSubmissionsAfterShutdownAreRejected(t *testing.T) {
	d := newFake(getPut)
	b, _ := fakeBackend(t, d, 1, Config{})
	assert.Nil(t, b.Shutdown(context.Background()))
	_, err := b.Fetch(rowsView(1), nil)
	require.ErrorIs(t, err, contract.ErrSubmissionRejected)
	assert.ErrorContains(t, err, "shut down")
	_, err = b.Publish(contract.View{Groups: []contract.Group{{Region: 7}}}, nil)
	require.ErrorIs(t, err, contract.ErrSubmissionRejected, "rejection comes before validation")
	assert.Zero(t, d.Calls())
}

func TestAFetchIntoAHugeBindingIsCheckedToo(t *testing.T) {
	d := newFake(getPut)
	huge := contract.SlotRegion{Base: 1 << 40, SlotBytes: 64, SlotCount: maxSlotBits + 1, Len: 64 * (maxSlotBits + 1), Kind: contract.Host}
	r, err := Bind(d, []contract.SlotRegion{huge}, &countingHold{})
	require.NoError(t, err)
	b, err := New(r, Config{KeyPrefix: "t"})
	require.NoError(t, err)
	require.Nil(t, b.slots.pool.New, "no bit sets of this size")
	last := int32(maxSlotBits)
	v := contract.View{Groups: []contract.Group{{Slots: []int32{last, 0, last}, Names: [][]byte{[]byte("a"), []byte("b"), []byte("c")}}}}
	_, err = b.Fetch(v, nil)
	var se *SubmissionError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 2, se.Row)
	assert.ErrorContains(t, err, "already fetched into by group 0 row 0")
	v.Groups[0].Slots[2] = 1
	_, err = b.Fetch(v, nil)
	require.NoError(t, err)
}

// In a binding too large for stamp tables, slots of different regions
// are different slots, whatever their indices, and a repeat is named as
// in any binding.
func TestAFetchIntoAHugeBindingTellsRegionsApart(t *testing.T) {
	d := newFake(getPut)
	small := fakeRegion(0, contract.Host) // 16 slots
	huge := contract.SlotRegion{Base: 1 << 40, SlotBytes: 64, SlotCount: maxSlotBits, Len: 64 * maxSlotBits, Kind: contract.Host}
	r, err := Bind(d, []contract.SlotRegion{small, huge}, &countingHold{})
	require.NoError(t, err)
	b, err := New(r, Config{KeyPrefix: "t"})
	require.NoError(t, err)
	require.Nil(t, b.slots.pool.New, "no bit sets of this size")
	group := func(region int, slots ...int32) contract.Group {
		g := contract.Group{Region: region, Slots: slots}
		for _, s := range slots {
			g.Names = append(g.Names, fmt.Appendf(nil, "r%d-s%d", region, s))
		}
		return g
	}
	// Every slot of region 0 against the region 1 slots whose index is
	// its own, or its own plus region 0's size.
	for s := range int32(small.SlotCount) {
		v := contract.View{Groups: []contract.Group{group(0, s), group(1, s, s+16)}}
		_, err := b.Fetch(v, nil)
		require.NoError(t, err, "region 0 slot %d", s)
	}
	v := contract.View{Groups: []contract.Group{group(0, 4), group(1, 9), group(1, 2, 9)}}
	_, err = b.Fetch(v, nil)
	var se *SubmissionError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 2, se.Group)
	assert.Equal(t, 1, se.Row)
	assert.ErrorContains(t, err, "slot 9 of region 1 is already fetched into by group 1 row 0")
}
