package mutate

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// An Entry is one equivalent mutant listed in a package's mutants.txt.
type Entry struct {
	// File is module-relative; Func the enclosing function's name; Code
	// the text on the mutated line that holds the mutated operator.
	File, Func, Code string
	Mutators         []string
	// Mutated says its file was mutated in this run; Matched that a
	// lived mutant matched it.
	Mutated, Matched bool
}

func (e *Entry) String() string {
	return fmt.Sprintf("%s in %s: `%s` (%s)", e.File, e.Func, e.Code, strings.Join(e.Mutators, ", "))
}

// entryLine is the first line of an entry in mutants.txt.
var entryLine = regexp.MustCompile("^\\s*- `([^`]+\\.go)` in `([^`]+)`: `([^`]+)` \\(([A-Z_]+(?:, [A-Z_]+)*)\\):")

// ReadEntries reads the mutants.txt of the package folder pkg (relative
// to the module root at root); a package without one lists none. Lines
// starting with # are comments; a line starting with "- " that is not a
// well-formed entry is an error naming it, so a typo never silently
// turns an equivalent mutant into a lived one.
func ReadEntries(root, pkg string) ([]*Entry, error) {
	name := filepath.Join(root, pkg, "mutants.txt")
	data, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var entries []*Entry
	for i, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "- ") {
			continue
		}
		m := entryLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("mutate: %s:%d: not an entry (want - `file.go` in `function`: `code` (MUTATOR): why): %q", name, i+1, line)
		}
		entries = append(entries, &Entry{File: path.Join(pkg, m[1]), Func: m[2], Code: m[3], Mutators: strings.Split(m[4], ", ")})
	}
	return entries, nil
}

// match returns the entry that calls a lived mutant equivalent: same
// file, function and mutator, and its code on the mutant's line covering
// the mutated column; nil if none does.
func match(entries []*Entry, src *source, m Mutant) *Entry {
	if m.Line < 1 || m.Line > len(src.lines) {
		return nil
	}
	text, col := src.lines[m.Line-1], m.Column-1
	fn := src.enclosing(m.Line)
	for _, e := range entries {
		if e.File != m.File || e.Func != fn || !slices.Contains(e.Mutators, m.Mutator) {
			continue
		}
		for from := 0; ; {
			i := strings.Index(text[from:], e.Code)
			if i < 0 {
				break
			}
			if start := from + i; start <= col && col < start+len(e.Code) {
				return e
			}
			from += i + 1
		}
	}
	return nil
}
