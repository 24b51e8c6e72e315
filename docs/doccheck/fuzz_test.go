package doccheck

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// inRange checks that every line a paragraph's scan gives lies in 1..n.
func inRange(t *testing.T, what string, line, n int) {
	t.Helper()
	if line < 1 || line > n {
		t.Fatalf("%s on line %d of %d", what, line, n)
	}
}

func FuzzScanMarkdown(f *testing.F) {
	f.Add(sample)
	f.Add("| a | b |\n|---|---|\n| `x` | [y](z.md#w), docs/a.md (section \"B\") |\n")
	f.Add("```\n```toml\n~~~\n````\n# h #\n")
	f.Add("[a](b) `c` ``d`` [e\nf](g) section \"h\" README's \"i\" and \"j\"")
	f.Fuzz(func(t *testing.T, src string) {
		n := strings.Count(strings.ReplaceAll(src, "\r\n", "\n"), "\n") + 1
		md := scanMarkdown(src)
		for _, h := range md.headings {
			inRange(t, "a heading", h.line, n)
			if h.level < 1 || h.level > 6 {
				t.Fatalf("heading level %d", h.level)
			}
			_ = slug(h.text)
		}
		for _, b := range md.fences {
			inRange(t, "a fence", b.line, n)
		}
		for _, tab := range md.tables {
			inRange(t, "a table", tab.line, n)
			if defaultColumn(tab.header) >= len(tab.header) {
				t.Fatal("a default column past the header")
			}
			for _, r := range tab.rows {
				inRange(t, "a row", r.line, n)
				for _, c := range r.cells {
					_ = rowNames(c)
				}
			}
		}
		for _, p := range md.paragraphs {
			if len(p.lines) != strings.Count(p.text, "\n")+1 {
				t.Fatalf("%d lines numbered for %d", len(p.lines), strings.Count(p.text, "\n")+1)
			}
			for _, l := range links(p) {
				inRange(t, "a link", l.line, n)
			}
			for _, r := range refs(p) {
				inRange(t, "a reference", r.line, n)
				if len(r.headings) == 0 {
					t.Fatal("a reference without a heading")
				}
			}
		}
	})
}

func FuzzGoParagraphs(f *testing.F) {
	f.Add("// a\n// docs/a.md, section \"B\"\n//\tcode\npackage p\n/* x\ny */\nvar s = `\n// no`\n")
	f.Fuzz(func(t *testing.T, src string) {
		n := strings.Count(src, "\n") + 1
		for _, p := range goParagraphs([]byte(src)) {
			for _, l := range p.lines {
				inRange(t, "a comment", l, n)
			}
			for _, r := range refs(p) {
				inRange(t, "a reference", r.line, n)
			}
		}
	})
}

func FuzzSlug(f *testing.F) {
	f.Add("The kvshare command (`tools`)")
	f.Add("A — B [c](d) É_9")
	f.Fuzz(func(t *testing.T, heading string) {
		s := slug(heading)
		if slug(s) != s {
			t.Fatalf("slug(%q) = %q, whose slug is %q", heading, s, slug(s))
		}
		for _, r := range s {
			if r != '-' && r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) {
				t.Fatalf("slug(%q) = %q holds %q", heading, s, r)
			}
		}
	})
}

func FuzzCells(f *testing.F) {
	f.Add("a\x1fb c\x1f`d`")
	f.Add("")
	f.Fuzz(func(t *testing.T, joined string) {
		parts := strings.Split(joined, "\x1f")
		for i, p := range parts {
			parts[i] = strings.TrimSpace(strings.NewReplacer("|", "", "\\", "").Replace(p))
		}
		line := "| " + strings.Join(parts, " | ") + " |"
		got := cells(line)
		if strings.Join(got, "\x1f") != strings.Join(parts, "\x1f") {
			t.Fatalf("cells(%q) = %q, want %q", line, got, parts)
		}
	})
}

func FuzzStated(f *testing.F) {
	f.Add("4, 1–1024", 1)
	f.Add("—, `0600`", 2)
	f.Add("64 GiB, 64, 8,192 (x; y)", 3)
	f.Fuzz(func(t *testing.T, cell string, n int) {
		got := stated(cell, n)
		if got != nil && len(got) != n {
			t.Fatalf("stated(%q, %d) gave %d values", cell, n, len(got))
		}
		for _, v := range got {
			if strings.Contains(v, "; ") || strings.Contains(v, ": ") || strings.Contains(v, " (") || !utf8.ValidString(v) && utf8.ValidString(cell) {
				t.Fatalf("stated(%q, %d) = %q: a value holds a stop", cell, n, got)
			}
		}
	})
}
