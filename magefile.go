//go:build mage

// The kvshare build. Every target works on a machine with only Go and gcc
// (the race detector needs cgo); run them with `go run mage.go <target>`.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/magefile/mage/mg"
	"github.com/magefile/mage/sh"
)

// Build compiles every package of every workspace module.
func Build() error {
	return sh.RunV("go", "build", "work")
}

// Test runs the CPU tests of every workspace module under the race detector.
func Test() error {
	return sh.RunWithV(map[string]string{"CGO_ENABLED": "1"}, "go", "test", "-race", "-count=1", "work")
}

// Lint runs go vet and a gofmt check on every module; any finding fails it.
func Lint() error {
	mods, err := modules()
	if err != nil {
		return err
	}
	var failed []string
	for _, m := range mods {
		if err := inModule(m, nil, "go", "vet", tags(m), "./..."); err != nil {
			failed = append(failed, m+": go vet")
		}
		out, err := sh.Output("gofmt", "-l", m)
		if err != nil {
			return fmt.Errorf("gofmt %s: %w", m, err)
		}
		if files := unformatted(out, m); len(files) > 0 {
			fmt.Printf("gofmt would change: %s\n", strings.Join(files, " "))
			failed = append(failed, m+": gofmt")
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("lint failed: %s", strings.Join(failed, "; "))
	}
	return nil
}

// Standalone builds, vets and tests each module alone (GOWORK=off), as a
// team vendoring one module would.
func Standalone() error {
	mods, err := modules()
	if err != nil {
		return err
	}
	off := map[string]string{"GOWORK": "off", "CGO_ENABLED": "1"}
	for _, m := range mods {
		fmt.Printf("== %s (GOWORK=off)\n", m)
		steps := [][]string{
			{"go", "build", "./..."},
			{"go", "vet", "./..."},
			{"go", "test", "-count=1", "./..."},
		}
		if m == "." {
			// The root's one package is this magefile (package main
			// without func main, behind the mage tag): vet type-checks it.
			steps = [][]string{{"go", "vet", tags(m), "./..."}}
		}
		for _, args := range steps {
			if err := inModule(m, off, args...); err != nil {
				return fmt.Errorf("%s: %s: %w", m, strings.Join(args, " "), err)
			}
		}
	}
	return nil
}

// Bench runs every module's benchmarks once (they measure, never assert);
// KVSHARE_BENCHTIME sets -benchtime (default 1s).
func Bench() error {
	mods, err := modules()
	if err != nil {
		return err
	}
	benchtime := os.Getenv("KVSHARE_BENCHTIME")
	if benchtime == "" {
		benchtime = "1s"
	}
	for _, m := range mods {
		if m == "." {
			continue
		}
		fmt.Printf("== %s\n", m)
		if err := inModule(m, nil, "go", "test", "-run", "^$", "-bench", ".", "-benchtime", benchtime, "./..."); err != nil {
			return fmt.Errorf("%s: benchmarks: %w", m, err)
		}
	}
	return nil
}

// CI runs what .ci/run runs: lint, deps, test, standalone, in that order.
func CI() {
	mg.SerialDeps(Lint, Deps, Test, Standalone)
}

// allowedImports is ARCHITECTURE §2's table: the modules (ours by folder,
// others by module path) each module's packages may import, tests aside.
var allowedImports = map[string][]string{
	"contract":    nil,
	"keys":        nil,
	"rowbatch":    {"contract"},
	"scheduler":   nil,
	"binding":     {"contract", "keys", "rowbatch"},
	"memdrv":      {"contract", "rowbatch", "scheduler"},
	"conformance": {"contract", "rowbatch", "github.com/stretchr/testify"},
	"mooncakesdk": {"github.com/ebitengine/purego", "github.com/BurntSushi/toml"},
	"tools":       {"*"},
}

// Deps checks that every module's packages (tests aside) import only
// what ARCHITECTURE §2 allows it, so the module graph stays the one the
// design draws: a consumer of contract and memdrv pulls in no purego.
func Deps() error {
	mods, err := modules()
	if err != nil {
		return err
	}
	const ours = "github.com/kvshare/kvshare/"
	var bad []string
	for _, m := range mods {
		if m == "." {
			continue
		}
		allowed, known := allowedImports[m]
		if !known {
			bad = append(bad, m+": not in the dependency table (magefile.go allowedImports)")
			continue
		}
		if len(allowed) == 1 && allowed[0] == "*" {
			continue
		}
		cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./...")
		cmd.Dir = m
		cmd.Env = append(os.Environ(), "GOWORK=off")
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("%s: go list: %w", m, err)
		}
		for _, pkg := range strings.Fields(string(out)) {
			if strings.HasPrefix(pkg, ours+m+"/") || pkg == ours+m {
				continue
			}
			if !importAllowed(pkg, ours, allowed) {
				bad = append(bad, fmt.Sprintf("%s imports %s", m, pkg))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("dependency rules broken:\n  %s", strings.Join(bad, "\n  "))
	}
	fmt.Println("deps: every module imports only what ARCHITECTURE §2 allows")
	return nil
}

func importAllowed(pkg, ours string, allowed []string) bool {
	for _, a := range allowed {
		path := a
		if !strings.Contains(a, ".") {
			path = ours + a
		}
		if pkg == path || strings.HasPrefix(pkg, path+"/") {
			return true
		}
	}
	return false
}

// modules returns the workspace's module directories from go.work, the
// root first.
func modules() ([]string, error) {
	out, err := sh.Output("go", "work", "edit", "-json")
	if err != nil {
		return nil, fmt.Errorf("reading go.work: %w", err)
	}
	var w struct{ Use []struct{ DiskPath string } }
	if err := json.Unmarshal([]byte(out), &w); err != nil {
		return nil, fmt.Errorf("reading go.work: %w", err)
	}
	if len(w.Use) == 0 {
		return nil, errors.New("go.work lists no module")
	}
	mods := make([]string, 0, len(w.Use))
	for _, u := range w.Use {
		mods = append(mods, filepath.Clean(u.DiskPath))
	}
	return mods, nil
}

// tags selects the build tags a module's own checks need: the root
// module's only package is this magefile, behind the mage tag.
func tags(dir string) string {
	if dir == "." {
		return "-tags=mage"
	}
	return "-tags="
}

// inModule runs a command in a module's folder with its output shown.
func inModule(dir string, env map[string]string, args ...string) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd.Run()
}

// unformatted lists gofmt's findings, leaving out nested modules' files
// when dir is the root (they are checked in their own turn).
func unformatted(out, dir string) []string {
	var files []string
	for _, f := range strings.Fields(out) {
		if dir == "." && strings.Contains(f, string(filepath.Separator)) {
			continue
		}
		files = append(files, f)
	}
	return files
}
