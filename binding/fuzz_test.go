package binding

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// fuzzView decodes a view from bytes: per group a region (-1 to 3; the
// binding has regions 0 host, 1 device, 2 host), a row count (0 to 15,
// a byte that makes the names one fewer or one more now and then), the
// slots (-2 to 17 of 16) and the names (0 to 6 bytes, or 600).
func fuzzView(data []byte) contract.View {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(b)
	}
	var v contract.View
	groups := next() % 4
	for range groups {
		g := contract.Group{Region: next()%5 - 1}
		rows := next() % 16
		names := rows
		switch next() % 8 {
		case 0:
			names--
		case 1:
			names++
		}
		for range rows {
			g.Slots = append(g.Slots, int32(next()%20-2))
		}
		for range max(names, 0) {
			n := next() % 8
			if n == 7 {
				n = 600
			}
			name := make([]byte, n)
			for i := range name {
				name[i] = byte(next() % 3) // few distinct names: repeats
			}
			g.Names = append(g.Names, name)
		}
		v.Groups = append(v.Groups, g)
	}
	return v
}

// FuzzSubmit checks the backend over any view: a refused view names a
// group and row inside it and reaches no driver; an accepted one is cut
// into calls that cover every row once, in order, within the caps,
// without a key twice in a call, and each row's span is its slot.
func FuzzSubmit(f *testing.F) {
	// groups, region+1, rows, names±, slots..., (name length, bytes...)...
	f.Add([]byte{1, 1, 3, 2, 0, 1, 2, 1, 0, 1, 1, 1, 2}, byte(0), true)           // 3 rows
	f.Add([]byte{1, 1, 4, 2, 0, 1, 2, 3, 1, 1, 1, 1, 1, 2, 1, 1}, byte(2), false) // repeated names
	f.Add([]byte{2, 3, 2, 2, 5, 6, 1, 0, 1, 1, 1, 1, 2, 2, 0, 1, 1, 2, 1, 1}, byte(1), true)
	f.Add([]byte{1, 2, 1, 2, 0, 1, 0}, byte(0), true)          // device region
	f.Add([]byte{1, 1, 2, 0, 0, 1, 1, 0}, byte(0), false)      // one name short
	f.Add([]byte{1, 1, 1, 2, 19, 7}, byte(3), true)            // slot and name out of range
	f.Add([]byte{1, 1, 2, 2, 4, 4, 1, 0, 1, 1}, byte(0), true) // fetch repeats a slot
	f.Fuzz(func(t *testing.T, data []byte, maxRows byte, isFetch bool) {
		v := fuzzView(data)
		d := newFake(getPut)
		d.answer = func(direction, string) contract.RowStatus { return contract.Ready }
		regions := []contract.SlotRegion{fakeRegion(0, contract.Host), fakeRegion(1, contract.Device), fakeRegion(2, contract.Host)}
		r, err := Bind(d, regions, &countingHold{})
		require.NoError(t, err)
		cap := int(maxRows % 5)
		b, err := New(r, Config{KeyPrefix: "fz", MaxRowsPerCall: cap})
		require.NoError(t, err)

		var a contract.Attempt
		if isFetch {
			a, err = b.Fetch(v, nil)
		} else {
			a, err = b.Publish(v, nil)
		}
		if err != nil {
			require.ErrorIs(t, err, contract.ErrInvalidSubmission)
			var se *SubmissionError
			require.True(t, errors.As(err, &se))
			require.Less(t, se.Group, len(v.Groups))
			if se.Row >= 0 {
				require.Less(t, se.Row, len(v.Groups[se.Group].Slots))
			}
			require.Zero(t, d.Calls(), "a refused view reached the driver")
			return
		}
		out, ok := a.Outcome()
		require.True(t, ok)
		require.True(t, a.Quiesced())
		require.Len(t, out.Delivered, v.Rows())
		require.Equal(t, v.Rows(), out.Prefix())

		var want []contract.Row
		for _, g := range v.Groups {
			reg := regions[g.Region]
			for i, slot := range g.Slots {
				want = append(want, contract.Row{Name: g.Names[i], Spans: []contract.Span{reg.Slot(int(slot))}})
			}
		}
		var got []contract.Row
		for _, op := range d.Ops() {
			rows := op.rows
			require.NotEmpty(t, rows)
			if cap > 0 {
				require.LessOrEqual(t, len(rows), cap)
			}
			keys := op.Keys()
			slices.Sort(keys)
			require.Len(t, slices.Compact(keys), len(rows), "a key twice in one call")
			got = append(got, rows...)
		}
		if len(want) > 0 {
			assert.Equal(t, want, got, "every row once, in order")
		}
	})
}
