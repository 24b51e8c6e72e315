package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Four sides rotate: each goes first once in four repetitions, and
// sides two apart (a kvshare case and its floor) run in each order in
// two of the four.
func TestInRotation(t *testing.T) {
	var order []int
	side := func(i int) func() { return func() { order = append(order, i) } }
	for rep := range 4 {
		inRotation(rep, side(0), side(1), side(2), side(3))
	}
	assert.Equal(t, []int{0, 1, 2, 3, 1, 2, 3, 0, 2, 3, 0, 1, 3, 0, 1, 2}, order)
}
