package bench

import "slices"

// turnOrder is the order n sides take turns in during repetition rep:
// the permutations of 0 … n−1 in lexical order, one a repetition, over
// and over, so that across n! repetitions each side goes first, and
// runs in each other side's wake, equally often. With two sides:
// kvshare first on even repetitions, the floor on odd ones (as
// [inTurn]).
func turnOrder(n, rep int) []int {
	sides := make([]int, n)
	for i := range sides {
		sides[i] = i
	}
	perms := permutations(sides)
	return perms[rep%len(perms)]
}

// permutations lists the orders of values, in lexical order when values
// are sorted.
func permutations(values []int) [][]int {
	if len(values) <= 1 {
		return [][]int{slices.Clone(values)}
	}
	var out [][]int
	for i, first := range values {
		others := slices.Delete(slices.Clone(values), i, i+1)
		for _, p := range permutations(others) {
			out = append(out, append([]int{first}, p...))
		}
	}
	return out
}
