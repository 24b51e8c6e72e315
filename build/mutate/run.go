package mutate

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/kvshare/kvshare/build/modules"
)

// addressSpace bounds every process of a run (gremlins, go, the
// compiler, each mutant's test binary): a mutant that loops allocating
// would otherwise take the machine's memory before its time limit ends
// it. Bounded, it dies of "out of memory" at once, and its tests fail:
// killed.
const addressSpace = 4 << 30

// Run tests the settings' modules of the repository at root (whose
// modules list names) and prints each module's figures and the summary
// to w. It fails when a goal is missed.
func Run(root string, list modules.List, s Settings, w io.Writer) error {
	restore, err := limitAddressSpace(addressSpace)
	if err != nil {
		return fmt.Errorf("mutate: %w", err)
	}
	defer restore()
	snap, err := os.MkdirTemp("", "kvshare-mutate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(snap)
	for _, m := range list.Dirs() {
		if m != "." {
			if err := snapshot(root, m, filepath.Join(snap, m)); err != nil {
				return fmt.Errorf("mutate: snapshot of %s: %w", m, err)
			}
		}
	}
	bin, realGo, err := tools(root, snap, w)
	if err != nil {
		return fmt.Errorf("mutate: %w", err)
	}
	var results []*Result
	for _, m := range s.Modules {
		fmt.Fprintf(w, "== %s\n", m)
		r, err := runModule(s, snap, bin, realGo, m, w)
		if err != nil {
			return fmt.Errorf("mutate: %s: %w", m, err)
		}
		r.Print(w)
		results = append(results, r)
	}
	if failed := Summary(w, results, s.Goal); len(failed) > 0 {
		return fmt.Errorf("mutate: goals missed:\n  %s", strings.Join(failed, "\n  "))
	}
	fmt.Fprintf(w, "mutate: every module at or above %.0f%%, no lived mutant in a guarded area\n", s.Goal)
	return nil
}

// runModule runs gremlins on each package of a module in the snapshot
// and adds up the figures.
func runModule(s Settings, snap, bin, realGo, module string, w io.Writer) (*Result, error) {
	res := &Result{Module: module}
	root := filepath.Join(snap, module)
	if err := absoluteReplaces(root); err != nil {
		return res, err
	}
	env := environment(snap, bin, realGo)
	cmd := exec.Command("go", "list", "-f", "{{.Dir}}", "./...")
	cmd.Dir, cmd.Env, cmd.Stderr = root, env, os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return res, fmt.Errorf("go list: %w", err)
	}
	var pkgs []string // package folders relative to the module root
	for _, dir := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			return res, err
		}
		pkgs = append(pkgs, filepath.ToSlash(rel))
	}
	for i, pkg := range pkgs {
		entries, err := ReadEntries(root, pkg)
		if err != nil {
			return res, err
		}
		res.Entries = append(res.Entries, entries...)
		excludes := nestedPackages(pkg, pkgs)
		files, err := packageFiles(filepath.Join(root, pkg))
		if err != nil {
			return res, err
		}
		mutated := 0
		for _, f := range files {
			if s.Files != nil && !s.Files.MatchString(path.Join(pkg, f)) {
				excludes = append(excludes, "^"+regexp.QuoteMeta(f)+"$")
				continue
			}
			mutated++
			for _, e := range entries {
				e.Mutated = e.Mutated || e.File == path.Join(pkg, f)
			}
		}
		if mutated == 0 {
			continue
		}
		rep := filepath.Join(snap, fmt.Sprintf("%s-%d.json", strings.ReplaceAll(module, "/", "_"), i))
		args := []string{"unleash", "--workers", strconv.Itoa(s.Workers),
			"--timeout-coefficient", strconv.Itoa(s.Coefficient), "--output-statuses", "lt", "-o", rep}
		for _, e := range excludes {
			args = append(args, "--exclude-files", e)
		}
		args = append(args, filepath.Join(root, pkg))
		fmt.Fprintf(w, "-- %s/%s\n", module, pkg)
		cmd := exec.Command(filepath.Join(bin, "gremlins"), args...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = root, env, w, os.Stderr
		if err := cmd.Run(); err != nil {
			return res, fmt.Errorf("gremlins on %s: %w", pkg, err)
		}
		if err := res.add(Guards, rep, root, pkg); err != nil {
			return res, err
		}
	}
	res.sort()
	return res, nil
}

// environment is that of every command a run starts in the snapshot:
// no workspace, no cached test results, no vet, temporary files
// (gremlins' work folders among them) inside the snapshot, and the go
// shim in bin ahead of the go command on PATH, told where the real one
// is.
func environment(snap, bin, realGo string) []string {
	tmp := filepath.Join(snap, ".tmp")
	_ = os.MkdirAll(tmp, 0o755)
	return append(os.Environ(), "GOWORK=off", "TMPDIR="+tmp,
		"GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -count=1 -vet=off"),
		"KVSHARE_MUTATE_GO="+realGo,
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// tools installs gremlins and builds the go shim (package goshim, from
// the repository at root) into the snapshot's .bin folder, and returns
// that folder and the real go command.
func tools(root, snap string, w io.Writer) (bin, realGo string, err error) {
	bin = filepath.Join(snap, ".bin")
	if realGo, err = exec.LookPath("go"); err != nil {
		return "", "", err
	}
	if realGo, err = filepath.Abs(realGo); err != nil {
		return "", "", err
	}
	install := exec.Command(realGo, "install", Gremlins)
	install.Env, install.Stdout, install.Stderr = append(os.Environ(), "GOWORK=off", "GOBIN="+bin), w, os.Stderr
	if err := install.Run(); err != nil {
		return "", "", fmt.Errorf("go install %s: %w", Gremlins, err)
	}
	shim := exec.Command(realGo, "build", "-o", filepath.Join(bin, "go"), modules.Prefix+"/build/mutate/goshim")
	shim.Dir, shim.Stdout, shim.Stderr = root, w, os.Stderr
	if err := shim.Run(); err != nil {
		return "", "", fmt.Errorf("building the go shim: %w", err)
	}
	return bin, realGo, nil
}

// absoluteReplaces rewrites a snapshot module's relative replace
// directives to absolute paths in the snapshot: gremlins copies the
// module alone into a folder of its own, where ../sibling would not
// resolve.
func absoluteReplaces(root string) error {
	cmd := exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go mod edit -json: %w", err)
	}
	var mod struct {
		Replace []struct {
			Old, New struct{ Path, Version string }
		}
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		return err
	}
	args := []string{"mod", "edit"}
	for _, r := range mod.Replace {
		if r.New.Version != "" || !(strings.HasPrefix(r.New.Path, "./") || strings.HasPrefix(r.New.Path, "../")) {
			continue
		}
		old := r.Old.Path
		if r.Old.Version != "" {
			old += "@" + r.Old.Version
		}
		args = append(args, "-replace="+old+"="+filepath.Join(root, r.New.Path))
	}
	if len(args) == 2 {
		return nil
	}
	cmd = exec.Command("go", args...)
	cmd.Dir, cmd.Stderr = root, os.Stderr
	return cmd.Run()
}

// nestedPackages returns gremlins exclusion patterns (relative to pkg)
// for the packages under pkg, which get runs of their own: gremlins gives
// each mutant a time limit in proportion to the tests of its whole path,
// so a slow package would give a fast one's hanging mutants minutes.
func nestedPackages(pkg string, pkgs []string) []string {
	var ex []string
	for _, p := range pkgs {
		if pkg == "." && p != "." {
			ex = append(ex, "^"+regexp.QuoteMeta(p)+"/")
		} else if strings.HasPrefix(p, pkg+"/") {
			ex = append(ex, "^"+regexp.QuoteMeta(strings.TrimPrefix(p, pkg+"/"))+"/")
		}
	}
	return ex
}

// packageFiles lists the non-test .go files of one package folder, as
// gremlins sees them (build constraints aside).
func packageFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			files = append(files, n)
		}
	}
	return files, nil
}
