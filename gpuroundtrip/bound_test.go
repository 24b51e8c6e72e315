package gpuroundtrip

import (
	"testing"

	"github.com/kvshare/kvshare/contract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// view returns a view of layers groups of blocks rows each.
func boundView(layers, blocks int) contract.View {
	v := contract.View{Groups: make([]contract.Group, layers)}
	for l := range v.Groups {
		v.Groups[l].Slots = make([]int32, blocks)
		v.Groups[l].Names = make([][]byte, blocks)
	}
	return v
}

// delivered builds an outcome from one string per layer: 'x' a block
// delivered, '.' one not.
func delivered(layers ...string) contract.Outcome {
	var o contract.Outcome
	for _, l := range layers {
		for _, c := range l {
			o.Delivered = append(o.Delivered, c == 'x')
		}
	}
	return o
}

// The resume bound is the minimum over layers of each layer's prefix,
// not the outcome's prefix over the whole view.
func TestResumeBound(t *testing.T) {
	for _, tc := range []struct {
		name       string
		layers     []string
		prefixes   []int
		bound      int
		viewPrefix int // contract.Outcome.Prefix, for contrast
	}{
		{"everything", []string{"xxxx", "xxxx", "xxxx"}, []int{4, 4, 4}, 4, 12},
		{"nothing", []string{"....", "....", "...."}, []int{0, 0, 0}, 0, 0},
		{"a block missing in one layer only", []string{"xxxx", "xx.x", "xxxx"}, []int{4, 2, 4}, 2, 6},
		{"later blocks faulted in the last layer", []string{"xxxx", "xxxx", "x..."}, []int{4, 4, 1}, 1, 9},
		{"first layer short, the rest whole", []string{"xxx.", "xxxx", "xxxx"}, []int{3, 4, 4}, 3, 3},
		{"a gap does not count later blocks", []string{"x.xx", "xxxx"}, []int{1, 4}, 1, 1},
		{"one layer", []string{"xx.x"}, []int{2}, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := delivered(tc.layers...)
			prefixes, err := LayerPrefixes(boundView(len(tc.layers), len(tc.layers[0])), o)
			require.NoError(t, err)
			assert.Equal(t, tc.prefixes, prefixes)
			assert.Equal(t, tc.bound, ResumeBound(prefixes))
			assert.Equal(t, tc.viewPrefix, o.Prefix())
		})
	}
	assert.Zero(t, ResumeBound(nil), "no layer, no block")
}

// An outcome that is not the view's is refused.
func TestLayerPrefixesRefusesAnotherViewsOutcome(t *testing.T) {
	for _, tc := range []struct {
		name    string
		view    contract.View
		outcome contract.Outcome
	}{
		{"too few rows", boundView(2, 4), delivered("xxxx")},
		{"too many rows", boundView(1, 2), delivered("xxx")},
		{"rows for an empty view", contract.View{}, delivered("x")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LayerPrefixes(tc.view, tc.outcome)
			assert.ErrorContains(t, err, "the view")
		})
	}
}

// The bound a transfer reports is the contract's, which LayerPrefixes'
// minimum agrees with.
func TestResumeBoundIsTheContracts(t *testing.T) {
	v := contract.View{Groups: []contract.Group{{Slots: make([]int32, 3)}, {Slots: make([]int32, 3)}}}
	o := contract.Outcome{Delivered: []bool{true, true, true, true, false, true}}
	prefixes, err := LayerPrefixes(v, o)
	require.NoError(t, err)
	assert.Equal(t, v.ResumeBound(o), ResumeBound(prefixes))
	assert.Equal(t, 1, v.ResumeBound(o))
}
