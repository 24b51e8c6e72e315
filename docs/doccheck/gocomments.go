package doccheck

import (
	"go/scanner"
	"go/token"
	"strings"
)

// goParagraphs is the prose of a Go file's comments: each run of
// line comments on consecutive lines (or each block comment), split at
// empty comment lines, with the comment markers removed. A line whose
// text starts with a tab is a code block in Go doc comments (gofmt
// indents them so) and is left out, as is a file that does not scan.
func goParagraphs(src []byte) []paragraph {
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, func(token.Position, string) {}, scanner.ScanComments)
	var out []paragraph
	var para paragraph
	last := 0
	flush := func() {
		if len(para.lines) > 0 {
			out = append(out, para)
		}
		para = paragraph{}
	}
	add := func(text string, line int) {
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "\t") {
			flush()
			return
		}
		para.text, para.lines = joinLine(para, strings.TrimPrefix(text, " "), line)
	}
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok != token.COMMENT {
			continue
		}
		line := file.Line(pos)
		if line != last+1 || !strings.HasPrefix(lit, "//") {
			flush()
		}
		if text, ok := strings.CutPrefix(lit, "//"); ok {
			add(text, line)
			last = line
			continue
		}
		for i, l := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(lit, "/*"), "*/"), "\n") {
			add(strings.TrimLeft(l, " *"), line+i)
		}
		flush()
		last = 0
	}
	flush()
	return out
}
