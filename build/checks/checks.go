// Package checks runs kvshare's per-module checks — lint, each module
// alone (GOWORK=off), the benchmarks — over every module of a list, with
// each module's build tags, printing as they go.
package checks

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kvshare/kvshare/build/modules"
)

// Tags is the -tags flag a module's vet and staticcheck use: its tags.
func Tags(m modules.Module) string { return "-tags=" + m.Tags }

// TestTags is the -tags flag a module's build and tests use: its tags
// without mage (the magefile is package main without a func main, which
// only vet can take).
func TestTags(m modules.Module) string {
	var keep []string
	for _, t := range strings.Split(m.Tags, ",") {
		if t != "" && t != "mage" {
			keep = append(keep, t)
		}
	}
	return "-tags=" + strings.Join(keep, ",")
}

// Lint runs go vet, staticcheck (pinned by the root module's tool
// directive), go mod tidy -diff (a tidy go.mod, so that a release's tidy
// changes only versions) and gofmt on every module, gofmt on every
// consumer, and names every finding.
func Lint(root string, list modules.List, w io.Writer) error {
	var failed []string
	for _, m := range list.Modules {
		for _, step := range []struct {
			name string
			env  []string
			args []string
		}{
			{"go vet", CgoEnv(Tags(m)), []string{"go", "vet", Tags(m), "./..."}},
			{"staticcheck", CgoEnv(Tags(m)), []string{"go", "tool", "staticcheck", Tags(m), "./..."}},
			{"go mod tidy -diff", []string{"GOWORK=off"}, []string{"go", "mod", "tidy", "-diff"}},
		} {
			if err := run(root, m, step.env, w, step.args...); err != nil {
				failed = append(failed, m.Dir+": "+step.name)
			}
		}
		if err := gofmt(filepath.Join(root, m.Dir), w); err != nil {
			failed = append(failed, m.Dir+": "+err.Error())
		}
	}
	for _, c := range list.Consumers {
		if err := gofmt(filepath.Join(root, c.Dir), w); err != nil {
			failed = append(failed, c.Dir+": "+err.Error())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("lint failed: %s", strings.Join(failed, "; "))
	}
	return nil
}

// Unformatted lists gofmt -l's findings under dir, leaving out files of
// nested modules (a folder below dir with a go.mod of its own), which are
// checked in their own turn.
func Unformatted(out, dir string) []string {
	var files []string
	for _, f := range strings.Fields(out) {
		if !inNestedModule(dir, f) {
			files = append(files, f)
		}
	}
	return files
}

// inNestedModule reports whether file lies in a folder below dir that
// has a go.mod of its own (or below such a folder).
func inNestedModule(dir, file string) bool {
	for d := filepath.Dir(file); d != dir && len(d) > len(dir); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return true
		}
	}
	return false
}

// gofmt checks the formatting of one module's files.
func gofmt(dir string, w io.Writer) error {
	out, err := exec.Command("gofmt", "-l", dir).Output()
	if err != nil {
		return fmt.Errorf("gofmt: %w", err)
	}
	if files := Unformatted(string(out), dir); len(files) > 0 {
		fmt.Fprintf(w, "gofmt would change: %s\n", strings.Join(files, " "))
		return fmt.Errorf("gofmt")
	}
	return nil
}

// Standalone builds, vets and tests each module alone (GOWORK=off, cgo
// on), as a team vendoring one module would.
func Standalone(root string, list modules.List, w io.Writer) error {
	timeout, err := TestTimeout()
	if err != nil {
		return err
	}
	for _, m := range list.Modules {
		fmt.Fprintf(w, "== %s (GOWORK=off)\n", m.Dir)
		env := append([]string{"GOWORK=off", "CGO_ENABLED=1"}, CgoEnv(Tags(m))...)
		for _, args := range [][]string{
			{"go", "build", TestTags(m), "./..."},
			{"go", "vet", Tags(m), "./..."},
			{"go", "test", "-count=1", timeout, TestTags(m), "./..."},
		} {
			if err := run(root, m, env, w, args...); err != nil {
				return fmt.Errorf("%s: %s: %w", m.Dir, strings.Join(args, " "), err)
			}
		}
	}
	return nil
}

// Bench runs every module's benchmarks once with -benchtime benchtime
// (they measure, never assert), then `kvshare bench --short`, over a
// loopback pool from mooncakeDir too when it is set.
func Bench(root string, list modules.List, benchtime, mooncakeDir string, w io.Writer) error {
	for _, m := range list.Modules {
		if m.Dir == "." {
			continue
		}
		fmt.Fprintf(w, "== %s\n", m.Dir)
		if err := run(root, m, CgoEnv(TestTags(m)), w, "go", "test", TestTags(m), "-run", "^$", "-bench", ".", "-benchtime", benchtime, "./..."); err != nil {
			return fmt.Errorf("%s: benchmarks: %w", m.Dir, err)
		}
	}
	args := []string{"go", "run", "./tools/cmd/kvshare", "bench", "--short"}
	if mooncakeDir != "" {
		args = append(args, "--mooncake-dir", mooncakeDir)
	}
	fmt.Fprintf(w, "== kvshare %s\n", strings.Join(args[3:], " "))
	if err := run(root, modules.Module{Dir: "."}, nil, w, args...); err != nil {
		return fmt.Errorf("kvshare bench: %w", err)
	}
	return nil
}

// run runs a command in a module's folder with env added, its output
// (standard output and error) written to w.
func run(root string, m modules.Module, env []string, w io.Writer, args ...string) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = filepath.Join(root, filepath.FromSlash(m.Dir))
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Env = append(os.Environ(), env...)
	return cmd.Run()
}
