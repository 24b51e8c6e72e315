package tier

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kvshare/kvshare/build/checks"
	"github.com/kvshare/kvshare/build/modules"
)

// A Tier is a set of test packages run as one.
type Tier struct {
	// Name prefixes every line the tier prints.
	Name string
	// Off is what a test of the tier logs when it skips because the tier
	// is not asked for; seen while the tier runs, it fails it.
	Off string
	// Packages are {module folder, package pattern}; every package they
	// match that has tests is in the tier.
	Packages [][2]string
	// Timeout is each binary's -test.timeout.
	Timeout string
	// Wrap prefixes every command the tier runs (a private network).
	Wrap []string
	// Env is the binaries' environment.
	Env []string
}

// A Package is one test binary of a tier.
type Package struct {
	Module, ImportPath, Dir, Binary string
}

// Counts counts tests (subtests included) by outcome.
type Counts struct{ Passed, Failed, Skipped int }

func (c *Counts) add(o Counts) {
	c.Passed += o.Passed
	c.Failed += o.Failed
	c.Skipped += o.Skipped
}

// Run builds and runs the tier from the repository at root (list names
// its modules and their build tags), with the binaries in bins. It
// returns the counts and an error naming every package that failed.
func (t Tier) Run(root string, list modules.List, bins string, w io.Writer) (Counts, error) {
	var total Counts
	pkgs, err := t.list(root)
	if err != nil {
		return total, err
	}
	fmt.Fprintf(w, "%s: building %d test binaries\n", t.Name, len(pkgs))
	for i := range pkgs {
		pkgs[i].Binary = filepath.Join(bins, fmt.Sprintf("%02d.test", i))
		tags := ""
		if m, err := list.Find(pkgs[i].Module); err == nil {
			tags = strings.Trim(strings.ReplaceAll(","+m.Tags+",", ",mage,", ","), ",")
		}
		cmd := exec.Command("go", "test", "-c", "-race", "-tags="+tags, "-o", pkgs[i].Binary, pkgs[i].ImportPath)
		cmd.Dir, cmd.Stdout, cmd.Stderr = filepath.Join(root, pkgs[i].Module), w, os.Stderr
		cmd.Env = append(append(os.Environ(), "CGO_ENABLED=1"), checks.CgoEnv(tags)...)
		if err := cmd.Run(); err != nil {
			return total, fmt.Errorf("%s: building %s: %w", t.Name, pkgs[i].ImportPath, err)
		}
	}
	// test2json reads the binaries' -test.v=test2json output; since Go
	// 1.24 it is built on demand, not shipped in GOTOOLDIR.
	test2json := filepath.Join(bins, "test2json")
	if out, err := exec.Command("go", "build", "-o", test2json, "cmd/test2json").CombinedOutput(); err != nil {
		return total, fmt.Errorf("%s: building test2json: %w: %s", t.Name, err, out)
	}
	var failed []string
	for _, pkg := range pkgs {
		args := append([]string{test2json, "-t", "-p", pkg.ImportPath}, t.Wrap...)
		args = append(args, pkg.Binary, "-test.v=test2json", "-test.count=1", "-test.parallel=1", "-test.timeout="+t.Timeout)
		counts, err := t.runBinary(pkg, args, w)
		total.add(counts)
		if err != nil {
			fmt.Fprintf(w, "%s: FAIL %s: %v\n", t.Name, pkg.ImportPath, err)
			failed = append(failed, pkg.ImportPath)
		}
	}
	fmt.Fprintf(w, "%s: %d passed, %d failed, %d skipped\n", t.Name, total.Passed, total.Failed, total.Skipped)
	if len(failed) > 0 {
		return total, fmt.Errorf("%s: failed: %s", t.Name, strings.Join(failed, ", "))
	}
	return total, nil
}

// list finds the tier's packages that have tests.
func (t Tier) list(root string) ([]Package, error) {
	var pkgs []Package
	for _, l := range t.Packages {
		cmd := exec.Command("go", "list", "-f", "{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}", l[1])
		cmd.Dir, cmd.Stderr = filepath.Join(root, l[0]), os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("%s: go list %s in %s: %w", t.Name, l[1], l[0], err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if path, dir, ok := strings.Cut(line, " "); ok {
				pkgs = append(pkgs, Package{Module: l[0], ImportPath: path, Dir: dir})
			}
		}
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("%s: no package with tests found", t.Name)
	}
	return pkgs, nil
}

// runBinary runs one test binary under test2json (args), from its
// package's folder, and judges it with [Tally].
func (t Tier) runBinary(pkg Package, args []string, w io.Writer) (Counts, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env, cmd.Stderr = pkg.Dir, t.Env, os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Counts{}, err
	}
	if err := cmd.Start(); err != nil {
		return Counts{}, err
	}
	v := Tally(stdout, t.Off, w)
	_, _ = io.Copy(io.Discard, stdout)
	waitErr := cmd.Wait()
	for _, s := range v.Skips {
		fmt.Fprintf(w, "%s:   skipped %s\n", t.Name, s)
	}
	fmt.Fprintf(w, "%s: %s: %d passed, %d failed, %d skipped\n", t.Name, pkg.ImportPath, v.Passed, v.Failed, v.Skipped)
	return v.Counts, v.judge(waitErr, w)
}

// A Verdict is what one binary's test2json stream showed.
type Verdict struct {
	Counts
	// Skips are "Test: reason" for each skipped test.
	Skips []string
	// Off says a test skipped as if the tier were off.
	Off bool
	// Unattributed is the output of no test (a panic, a timeout, a
	// failing TestMain).
	Unattributed string
}

// event is one line of test2json's output.
type event struct {
	Action, Test, Output string
}

// Tally reads a test2json stream, prints the output of each failed test
// to w, and counts; off is the tier's off marker.
func Tally(r io.Reader, off string, w io.Writer) Verdict {
	var v Verdict
	outputs := map[string]*strings.Builder{}
	dec := json.NewDecoder(r)
	for {
		var ev event
		if err := dec.Decode(&ev); err != nil {
			break
		}
		if outputs[ev.Test] == nil {
			outputs[ev.Test] = &strings.Builder{}
		}
		switch ev.Action {
		case "output":
			outputs[ev.Test].WriteString(ev.Output)
			v.Off = v.Off || off != "" && strings.Contains(ev.Output, off)
		case "pass":
			if ev.Test != "" {
				v.Passed++
			}
		case "skip":
			if ev.Test != "" {
				v.Skipped++
				v.Skips = append(v.Skips, ev.Test+": "+skipReason(outputs[ev.Test].String()))
			}
		case "fail":
			if ev.Test != "" {
				v.Failed++
				fmt.Fprint(w, outputs[ev.Test].String())
			}
		}
	}
	if o := outputs[""]; o != nil {
		v.Unattributed = o.String()
	}
	return v
}

// judge fails a binary that failed a test or exited non-zero, skipped as
// if the tier were off, or ran no test.
func (v Verdict) judge(exit error, w io.Writer) error {
	switch {
	case exit != nil || v.Failed > 0:
		if v.Failed == 0 {
			fmt.Fprint(w, v.Unattributed)
		}
		return fmt.Errorf("%d failed, exit: %v", v.Failed, exit)
	case v.Off:
		return errors.New("a test skipped as if the tier were off although the tier was asked for")
	case v.Passed == 0:
		return errors.New("ran no test")
	}
	return nil
}

// skipReason picks the message of a skipped test from its output.
func skipReason(out string) string {
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "=== ") && !strings.HasPrefix(line, "--- ") {
			return line
		}
	}
	return "(no reason given)"
}
