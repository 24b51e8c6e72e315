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

// ResumeBound returns the number of leading blocks that arrived in every
// layer: the minimum of the layers' prefixes (0 for no layer). A request
// can resume at this block and no later: a block is only usable when
// every layer has it, and a KV prefix only as long as its first gap.
//
// It is not contract.Outcome.Prefix over the whole view: that counts
// across layers, so a fully delivered first layer would count all its
// blocks however little the later layers brought.
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
