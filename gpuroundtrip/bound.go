package gpuroundtrip

import (
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// LayerPrefixes returns, for each group of v (a layer, in a lender's
// view), how many of its leading rows the outcome marks delivered. The
// outcome must be the one of an attempt over v: one flag per row, in
// view order.
func LayerPrefixes(v contract.View, o contract.Outcome) ([]int, error) {
	if n := v.Rows(); len(o.Delivered) != n {
		return nil, fmt.Errorf("gpuroundtrip: outcome has %d rows, the view %d", len(o.Delivered), n)
	}
	prefixes := make([]int, len(v.Groups))
	row := 0
	for gi, g := range v.Groups {
		p := 0
		for p < len(g.Slots) && o.Delivered[row+p] {
			p++
		}
		prefixes[gi] = p
		row += len(g.Slots)
	}
	return prefixes, nil
}

// ResumeBound returns the minimum of the layers' prefixes (0 for no
// layer): the number of leading blocks that arrived in every layer.
//
// Deprecated: use contract.View.ResumeBound, which takes the view and its
// outcome.
func ResumeBound(prefixes []int) int {
	if len(prefixes) == 0 {
		return 0
	}
	bound := prefixes[0]
	for _, p := range prefixes[1:] {
		bound = min(bound, p)
	}
	return bound
}
