package doccheck

import (
	"strings"
)

// defaultColumn is the index of a table's default column: the first
// whose header, read plain and in lower case, starts with "default" or
// is "zero value"; -1 when none.
func defaultColumn(header []string) int {
	for i, h := range header {
		h = strings.ToLower(plain(h))
		if strings.HasPrefix(h, "default") || h == "zero value" {
			return i
		}
	}
	return -1
}

// rowNames is what a table's name cell names: each code span's text up
// to its first space or "=" (`mode = "0660"` names mode), or the cell's
// plain text when it holds no code span; none for an empty cell or a
// dash.
func rowNames(cell string) []string {
	var out []string
	codeSpans(cell, func(start, end int) {
		name := strings.Trim(cell[start:end], "` ")
		if i := strings.IndexAny(name, " ="); i >= 0 {
			name = name[:i]
		}
		if name != "" {
			out = append(out, name)
		}
	})
	if out != nil {
		return out
	}
	switch p := plain(cell); p {
	case "", "—", "–", "-":
		return nil
	default:
		return []string{p}
	}
}

// stated is what a default cell states for a row naming n fields: the
// cell read plain, cut at its first "; ", ": " or " (", then split at
// ", " — one value for each field in order, or one value for them all.
// It is nil when the cell states neither.
func stated(cell string, n int) []string {
	s := plain(cell)
	for _, stop := range []string{"; ", ": ", " ("} {
		if i := strings.Index(s, stop); i >= 0 {
			s = s[:i]
		}
	}
	clauses := strings.Split(s, ", ")
	for i, c := range clauses {
		clauses[i] = strings.TrimSuffix(strings.TrimSpace(c), ".")
	}
	switch {
	case n < 1:
		return nil
	case len(clauses) >= n:
		return clauses[:n]
	case len(clauses) == 1:
		out := make([]string, n)
		for i := range out {
			out[i] = clauses[0]
		}
		return out
	}
	return nil
}
