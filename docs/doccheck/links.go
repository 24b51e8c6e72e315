package doccheck

import (
	"regexp"
	"strings"
)

// A link is one inline link or image of a Markdown file whose target is
// in the repository: a path relative to the file, an anchor, or both.
type link struct {
	line   int
	path   string // "" for an anchor in the same file
	anchor string // "" for none
}

var (
	// inlineLink is [text](target) or ![alt](target), with an optional
	// title; the text may hold one level of brackets.
	inlineLink = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^()\s<>]*)>?(?:\s+"[^"]*")?\s*\)`)
	scheme     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// links lists the links of a paragraph that point into the repository,
// those inside code spans left out.
func links(p paragraph) []link {
	text := blankCode(p.text)
	var out []link
	for _, m := range inlineLink.FindAllStringSubmatchIndex(text, -1) {
		target := text[m[4]:m[5]]
		if target == "" || scheme.MatchString(target) || strings.HasPrefix(target, "//") {
			continue
		}
		path, anchor, _ := strings.Cut(target, "#")
		out = append(out, link{line: p.lineAt(m[0]), path: path, anchor: anchor})
	}
	return out
}
