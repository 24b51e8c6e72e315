package doccheck

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestLinksResolve checks that every relative link of the Markdown
// names a file or folder of the repository, and its #anchor a heading
// of that file.
func TestLinksResolve(t *testing.T) {
	r := openRepo(t)
	for _, name := range r.files(t, ".md") {
		for _, p := range r.doc(t, name).paragraphs {
			for _, l := range links(p) {
				if problem := r.checkLink(t, name, l); problem != "" {
					t.Error(problem)
				}
			}
		}
	}
}

// checkLink says what is wrong with one link of the file name, or "".
func (r *repo) checkLink(t *testing.T, name string, l link) string {
	target := name
	if l.path != "" {
		target = resolve(r.root, name, l.path, true)
		if target == "" {
			return fmt.Sprintf("%s:%d: link to %s: no such file in the repository", name, l.line, l.path)
		}
	}
	if l.anchor == "" || path.Ext(target) != ".md" {
		return ""
	}
	if !anchors(r.doc(t, target).headings)[l.anchor] {
		return fmt.Sprintf("%s:%d: link to %s#%s: %s has no heading with that anchor", name, l.line, l.path, l.anchor, target)
	}
	return ""
}

// TestSectionReferencesResolve checks that every reference to a
// heading, in the forms the package documentation lists, in the
// Markdown and in Go comments names a heading that the file holds.
func TestSectionReferencesResolve(t *testing.T) {
	r := openRepo(t)
	for _, name := range r.files(t, ".md") {
		for _, p := range r.doc(t, name).paragraphs {
			for _, ref := range refs(p) {
				for _, problem := range r.checkRef(t, name, ref) {
					t.Error(problem)
				}
			}
		}
	}
	for _, name := range r.files(t, ".go") {
		for _, p := range goParagraphs(r.read(t, name)) {
			for _, ref := range refs(p) {
				for _, problem := range r.checkRef(t, name, ref) {
					t.Error(problem)
				}
			}
		}
	}
}

// checkRef says what is wrong with one reference of the file name.
func (r *repo) checkRef(t *testing.T, name string, ref ref) []string {
	target := name
	switch {
	case ref.file == "" && path.Ext(name) != ".md":
		return []string{fmt.Sprintf("%s:%d: section %q names no file: write the file before it (docs/X.md, section \"...\")", name, ref.line, ref.headings[0])}
	case ref.file != "":
		target = resolve(r.root, name, ref.file, ref.linked)
		if target == "" {
			return []string{fmt.Sprintf("%s:%d: section %q of %s: no such file in the repository", name, ref.line, ref.headings[0], ref.file)}
		}
	}
	if path.Ext(target) != ".md" {
		return []string{fmt.Sprintf("%s:%d: section %q of %s: not a Markdown file", name, ref.line, ref.headings[0], target)}
	}
	var have []string
	for _, h := range r.doc(t, target).headings {
		have = append(have, strings.Join(strings.Fields(plain(h.text)), " "))
	}
	var problems []string
	for _, quote := range ref.headings {
		if !slices.ContainsFunc(have, func(h string) bool { return names(quote, h) }) {
			problems = append(problems, fmt.Sprintf("%s:%d: section %q: %s has no such heading%s", name, ref.line, quote, target, near(have, quote)))
		}
	}
	return problems
}

// near names the headings that start with h's first word, to help the
// reader of a failure find the one meant.
func near(have []string, h string) string {
	first, _, _ := strings.Cut(h, " ")
	var out []string
	for _, k := range have {
		if strings.HasPrefix(k, first) && len(out) < 5 {
			out = append(out, fmt.Sprintf("%q", k))
		}
	}
	if len(out) == 0 {
		return ""
	}
	sort.Strings(out)
	return " (headings starting alike: " + strings.Join(out, ", ") + ")"
}
