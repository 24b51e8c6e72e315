package tomlfile

import "strings"

// Nearest returns the name in known that name is most likely a slip of
// the keyboard for: the same name in another case, or one at most one
// edit away (two for names longer than four letters), an edit being a
// letter added, dropped, changed or two neighbours swapped. It returns
// "" when none is that close; of several equally close, the first.
func Nearest(name string, known []string) string {
	limit := 1
	if len([]rune(name)) > 4 {
		limit = 2
	}
	best, bestDist := "", limit+1
	for _, k := range known {
		if d := edits(strings.ToLower(name), strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// edits is the optimal string alignment distance between a and b: the
// fewest letters added, dropped, changed or swapped with a neighbour
// that turn one into the other.
func edits(a, b string) int {
	x, y := []rune(a), []rune(b)
	// d[i][j] is the distance between x[:i] and y[:j].
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// suggestion is "; did you mean X?" for the nearest of known to name
// (each written by write), or "".
func suggestion(name string, known []string, write func(string) string) string {
	if n := Nearest(name, known); n != "" {
		return "; did you mean " + write(n) + "?"
	}
	return ""
}
