package doccheck

import (
	"regexp"
	"strings"
)

// A ref is one reference to headings of a file, in one of the forms the
// package documentation lists.
type ref struct {
	line int
	// file is the file as the text names it: a path, or the bare word
	// README; empty when the text names none before the headings.
	file string
	// linked says file is a link's target, relative to the file that
	// holds the link.
	linked   bool
	headings []string
}

const (
	refFile = `(?:\[[^\]\n]*\]\(([^()\s#]+)(?:#[^()\s]*)?\)` + // [text](path), 1
		`|((?:\.\.?/)?(?:[\w.-]+/)*[\w.-]+\.md)` + // docs/design.md, README.md, 2
		`|\b(README))` // the bare word, 3
	refHeading = `"([^"]{1,160})"` // 4
	refMore    = `((?:\s*,?\s+and\s+"[^"]{1,160}"|\s*,\s*"[^"]{1,160}")*)`
)

var (
	// fileRef is FILE, then 's, a comma or an opening parenthesis, the
	// word section or sections, and one or more quoted headings.
	fileRef = regexp.MustCompile(refFile + `(?:'s)?\s*,?\s*\(?\s*(?:sections?\s+)?` + refHeading + refMore)
	// bareRef is the word section (or sections) and quoted headings,
	// with no file right before them.
	bareRef   = regexp.MustCompile(`\bsections?\s+` + refHeading + refMore)
	quoted    = regexp.MustCompile(`"([^"]{1,160})"`)
	fileNamed = regexp.MustCompile(refFile)
)

// refs lists the heading references of a paragraph. A reference without
// a file right before it refers to the file the paragraph named last
// before it, or, when it named none, to the file that holds the
// paragraph (an empty file).
func refs(p paragraph) []ref {
	if !strings.Contains(p.text, `"`) || !strings.Contains(p.text, ".md") && !strings.Contains(p.text, "README") && !strings.Contains(p.text, "section") {
		return nil // no reference can be there: skip the expressions
	}
	text := strings.ReplaceAll(p.text, "`", " ")
	var out []ref
	var taken [][]int
	for _, m := range fileRef.FindAllStringSubmatchIndex(text, -1) {
		r := ref{line: p.lineAt(m[8])}
		r.file, r.linked = fileOf(text, m)
		r.headings = headingsOf(p.text[m[8]-1 : m[1]])
		out = append(out, r)
		taken = append(taken, m)
	}
	for _, m := range bareRef.FindAllStringIndex(text, -1) {
		if inside(taken, m[0]) {
			continue
		}
		r := ref{line: p.lineAt(m[0]), headings: headingsOf(p.text[m[0]:m[1]])}
		if named := fileNamed.FindAllStringSubmatchIndex(text[:m[0]], -1); len(named) > 0 {
			r.file, r.linked = fileOf(text, named[len(named)-1])
		}
		out = append(out, r)
	}
	return out
}

// fileOf is the file a match of refFile names, and whether it is a
// link's target.
func fileOf(text string, m []int) (string, bool) {
	switch {
	case m[2] >= 0:
		return text[m[2]:m[3]], true
	case m[4] >= 0:
		return text[m[4]:m[5]], false
	}
	return text[m[6]:m[7]], false
}

// inside reports whether offset off lies inside one of the matches.
func inside(matches [][]int, off int) bool {
	for _, m := range matches {
		if off >= m[0] && off < m[1] {
			return true
		}
	}
	return false
}

// headingsOf is every quoted heading of s, read as plain text with its
// line breaks made spaces.
func headingsOf(s string) []string {
	var out []string
	for _, q := range quoted.FindAllStringSubmatch(s, -1) {
		out = append(out, strings.Join(strings.Fields(plain(q[1])), " "))
	}
	return out
}

// titleEnds are what may follow a heading's short title: a reference
// may quote a heading up to one of them ("When calls meet" for "When
// calls meet: who owns what").
var titleEnds = []string{": ", ", ", " (", " — ", " - "}

// names reports whether a reference's quoted text names the heading h
// (both read plain): h itself, or h's start up to one of titleEnds.
func names(quote, h string) bool {
	if quote == h {
		return true
	}
	rest, ok := strings.CutPrefix(h, quote)
	if !ok || quote == "" {
		return false
	}
	for _, end := range titleEnds {
		if strings.HasPrefix(rest, end) {
			return true
		}
	}
	return false
}
