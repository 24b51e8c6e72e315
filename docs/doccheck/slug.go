package doccheck

import (
	"strconv"
	"strings"
	"unicode"
)

// slug is the anchor GitHub gives a heading: its text as read, lower
// case, every character but letters, digits, spaces, hyphens and
// underscores dropped, spaces made hyphens.
func slug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(plain(text)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors is every heading's anchor in a file: the slug, and for the
// n-th repeat of a slug the slug and "-n".
func anchors(hs []heading) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, h := range hs {
		s := slug(h.text)
		a := s
		if n := seen[s]; n > 0 {
			a = s + "-" + strconv.Itoa(n)
		}
		seen[s]++
		out[a] = true
	}
	return out
}
