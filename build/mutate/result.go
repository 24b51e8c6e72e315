package mutate

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// A Mutant is one mutant that lived: File (module-relative), position and
// mutator; Guard names the guarded area it is in, if any; Why the
// mutants.txt entry that calls it equivalent, if one does.
type Mutant struct {
	File, Mutator, Guard, Why string
	Line, Column              int
}

func (m Mutant) String() string {
	return fmt.Sprintf("%s:%d:%d %s", m.File, m.Line, m.Column, m.Mutator)
}

// A Result is one module's figures.
type Result struct {
	Module                                  string
	Killed, TimedOut, NotCovered, NotViable int
	Lived, Equivalent                       []Mutant
	// Entries are the module's mutants.txt entries.
	Entries []*Entry
}

// Efficacy is killed ÷ (killed + lived) in percent, equivalent mutants
// left out.
func (r *Result) Efficacy() float64 {
	if r.Killed+len(r.Lived) == 0 {
		return 0
	}
	return 100 * float64(r.Killed) / float64(r.Killed+len(r.Lived))
}

// RawEfficacy is the figure gremlins prints: equivalents count as lived.
func (r *Result) RawEfficacy() float64 {
	all := r.Killed + len(r.Lived) + len(r.Equivalent)
	if all == 0 {
		return 0
	}
	return 100 * float64(r.Killed) / float64(all)
}

// Print writes the module's figures, its lived and equivalent mutants,
// and a warning for every entry of a mutated file that nothing matched.
func (r *Result) Print(w io.Writer) {
	fmt.Fprintf(w, "%s: efficacy %.2f%% (killed %d, lived %d, equivalent %d, timed out %d, not covered %d, not viable %d; gremlins' figure %.2f%%)\n",
		r.Module, r.Efficacy(), r.Killed, len(r.Lived), len(r.Equivalent), r.TimedOut, r.NotCovered, r.NotViable, r.RawEfficacy())
	for _, l := range r.Lived {
		if l.Guard != "" {
			fmt.Fprintf(w, "  lived: %s  [%s]\n", l, l.Guard)
		} else {
			fmt.Fprintf(w, "  lived: %s\n", l)
		}
	}
	for _, e := range r.Equivalent {
		fmt.Fprintf(w, "  equivalent: %s  (%s)\n", e, e.Why)
	}
	for _, e := range r.Entries {
		if !e.Matched && e.Mutated {
			fmt.Fprintf(w, "  warning: no lived mutant matched the equivalent-mutant entry %s\n", e)
		}
	}
}

// Failures lists the goals a module's result misses: efficacy under goal,
// and each mutant that lived in a guarded area.
func (r *Result) Failures(goal float64) []string {
	var failed []string
	if r.Killed+len(r.Lived) > 0 && r.Efficacy() < goal {
		failed = append(failed, fmt.Sprintf("%s: efficacy %.2f%% under %.0f%%", r.Module, r.Efficacy(), goal))
	}
	for _, l := range r.Lived {
		if l.Guard != "" {
			failed = append(failed, fmt.Sprintf("%s: lived in the %s: %s", r.Module, l.Guard, l))
		}
	}
	return failed
}

// report is the part of gremlins' -o JSON that a run reads.
type report struct {
	Files []struct {
		FileName  string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

// add reads one gremlins report of the package folder pkg (relative to
// the module root at root) into r; a missing report (gremlins found no
// mutant) adds nothing.
func (r *Result) add(guards []Guard, reportFile, root, pkg string) error {
	data, err := os.ReadFile(reportFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var rep report
	if err := json.Unmarshal(data, &rep); err != nil {
		return fmt.Errorf("reading %s: %w", reportFile, err)
	}
	for _, f := range rep.Files {
		file := path.Join(pkg, filepath.ToSlash(f.FileName))
		src, err := readSource(root, file)
		if err != nil {
			return err
		}
		for _, m := range f.Mutations {
			switch m.Status {
			case "KILLED":
				r.Killed++
			case "LIVED":
				l := Mutant{File: file, Mutator: m.Type, Line: m.Line, Column: m.Column}
				l.Guard = guardOf(guards, r.Module, src, l)
				if e := match(r.Entries, src, l); e != nil {
					e.Matched = true
					l.Why = e.String()
					r.Equivalent = append(r.Equivalent, l)
				} else {
					r.Lived = append(r.Lived, l)
				}
			case "TIMED OUT":
				r.TimedOut++
			case "NOT COVERED":
				r.NotCovered++
			case "NOT VIABLE":
				r.NotViable++
			}
		}
	}
	return nil
}

// sort orders the mutants by file, position and mutator.
func (r *Result) sort() {
	less := func(a, b Mutant) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Column, b.Column), strings.Compare(a.Mutator, b.Mutator))
	}
	slices.SortFunc(r.Lived, less)
	slices.SortFunc(r.Equivalent, less)
}

// Summary writes one line a module and returns every goal missed.
func Summary(w io.Writer, results []*Result, goal float64) []string {
	fmt.Fprintln(w, "== mutate summary")
	fmt.Fprintf(w, "%-12s %9s %7s %6s %11s %10s %12s %11s %9s\n",
		"module", "efficacy", "killed", "lived", "equivalent", "timed-out", "not-covered", "not-viable", "gremlins")
	var failed []string
	for _, r := range results {
		fmt.Fprintf(w, "%-12s %8.2f%% %7d %6d %11d %10d %12d %11d %8.2f%%\n", r.Module, r.Efficacy(),
			r.Killed, len(r.Lived), len(r.Equivalent), r.TimedOut, r.NotCovered, r.NotViable, r.RawEfficacy())
		failed = append(failed, r.Failures(goal)...)
	}
	return failed
}
