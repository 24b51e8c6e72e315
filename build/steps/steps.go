// Package steps runs the steps of a mage target made of several (ci):
// one line per step — its name, how long it took, and whether it passed —
// and the whole output of a step that failed, so that a run that passes
// reads in a few lines and one that fails shows everything.
package steps

import (
	"bytes"
	"fmt"
	"io"
	"time"
)

// A Step is one step of a run: its name and what it does, writing its
// output (the commands' standard output and error) to w.
type Step struct {
	Name string
	Run  func(w io.Writer) error
}

// Run runs steps in order, printing to w one line per step as it ends
// ("ci: lint passed in 202 s"). A step that fails is followed by its
// whole output and ends the run with an error naming it. With verbose,
// every step's output is written to w as it comes instead of kept.
func Run(prefix string, steps []Step, w io.Writer, verbose bool) error {
	for _, st := range steps {
		var out bytes.Buffer
		sink := io.Writer(&out)
		if verbose {
			sink = w
		}
		start := time.Now()
		err := st.Run(sink)
		took := time.Since(start).Seconds()
		if err == nil {
			fmt.Fprintf(w, "%s: %s passed in %.0f s\n", prefix, st.Name, took)
			continue
		}
		fmt.Fprintf(w, "%s: %s FAILED in %.0f s: %v\n", prefix, st.Name, took, err)
		if !verbose {
			fmt.Fprintf(w, "%s: the output of %s:\n", prefix, st.Name)
			_, _ = w.Write(out.Bytes())
			if out.Len() > 0 && out.Bytes()[out.Len()-1] != '\n' {
				fmt.Fprintln(w)
			}
		}
		return fmt.Errorf("%s: %s: %w", prefix, st.Name, err)
	}
	return nil
}
