//go:build mage

// The kvshare build. Every target works on a machine with only Go and gcc
// (the race detector needs cgo); run them with `go run mage.go <target>`.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// Lint runs go vet, staticcheck (the version the root module's tool
// directive pins) and a gofmt check on every module; any finding fails
// it.
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
		// staticcheck is pinned by the root module's tool directive.
		if err := inModule(m, nil, "go", "tool", "staticcheck", tags(m), "./..."); err != nil {
			failed = append(failed, m+": staticcheck")
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

// Bench runs every module's benchmarks once (they measure, never assert),
// then kvshare bench with short settings (measurements 1–4; 5 too when
// KVSHARE_MOONCAKE_DIR names a Mooncake folder); KVSHARE_BENCHTIME sets
// -benchtime (default 1s).
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
	args := []string{"go", "run", "./tools/cmd/kvshare", "bench", "--short"}
	if dir := os.Getenv("KVSHARE_MOONCAKE_DIR"); dir != "" {
		args = append(args, "--mooncake-dir", dir)
	}
	fmt.Printf("== kvshare %s\n", strings.Join(args[3:], " "))
	if err := inModule(".", nil, args...); err != nil {
		return fmt.Errorf("kvshare bench: %w", err)
	}
	return nil
}

// CI runs what .ci/run runs: lint, deps, test, standalone, in that order.
func CI() {
	mg.SerialDeps(Lint, Deps, Test, Standalone)
}

// Realpool runs the real-pool tier: the tests that start a real Mooncake
// pool. Off (one line, success) when KVSHARE_MOONCAKE_DIR is unset; when
// set it must be the absolute path of a usable Mooncake folder (bin/,
// lib/), else it fails saying why. It builds every test binary first,
// then runs them one at a time (-p 1, -test.parallel=1: one pool at a
// time), inside a private network namespace when root and unshare allow
// it, else on loopback. Failures are shown, passes counted; a test that
// skips as if the tier were off, or a binary that runs no test, fails it.
// KVSHARE_REALPOOL_TIMEOUT sets each binary's -test.timeout (default 20m).
func Realpool() error {
	dir := os.Getenv("KVSHARE_MOONCAKE_DIR")
	if dir == "" {
		fmt.Println("realpool: off (KVSHARE_MOONCAKE_DIR is not set; set it to the absolute path of a Mooncake folder to run the real-pool tier)")
		return nil
	}
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("realpool: KVSHARE_MOONCAKE_DIR=%q is not an absolute path", dir)
	}
	timeout := os.Getenv("KVSHARE_REALPOOL_TIMEOUT")
	if timeout == "" {
		timeout = "20m"
	}
	// The folder checked as the tests will check it; prints the library's
	// SHA-256 and mooncake_master --version.
	if err := inModule("mooncakedrv", nil, "go", "run", "./pool/internal/tiercheck"); err != nil {
		return fmt.Errorf("realpool: KVSHARE_MOONCAKE_DIR=%s cannot be used (see above): %w", dir, err)
	}
	pkgs, err := realPoolPackages()
	if err != nil {
		return err
	}
	bins, err := os.MkdirTemp("", "kvshare-realpool-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bins)
	fmt.Printf("realpool: building %d test binaries\n", len(pkgs))
	for i := range pkgs {
		pkgs[i].binary = filepath.Join(bins, fmt.Sprintf("%02d.test", i))
		err := inModule(pkgs[i].module, map[string]string{"CGO_ENABLED": "1"},
			"go", "test", "-c", "-race", "-o", pkgs[i].binary, pkgs[i].importPath)
		if err != nil {
			return fmt.Errorf("realpool: building %s: %w", pkgs[i].importPath, err)
		}
	}
	// test2json reads the binaries' -test.v=test2json output; since Go
	// 1.24 it is built on demand, not shipped in GOTOOLDIR.
	test2json := filepath.Join(bins, "test2json")
	if err := sh.Run("go", "build", "-o", test2json, "cmd/test2json"); err != nil {
		return fmt.Errorf("realpool: building test2json: %w", err)
	}
	wrap, where := privateNetwork()
	fmt.Println("realpool: running", where)
	env, err := realPoolEnv()
	if err != nil {
		return err
	}
	var total testCounts
	var failed []string
	for _, pkg := range pkgs {
		args := append(append([]string(nil), wrap...), pkg.binary,
			"-test.v=test2json", "-test.count=1", "-test.parallel=1", "-test.timeout="+timeout)
		counts, err := runTestBinary(pkg, env, append([]string{test2json, "-t", "-p", pkg.importPath}, args...))
		total.add(counts)
		if err != nil {
			fmt.Printf("realpool: FAIL %s: %v\n", pkg.importPath, err)
			failed = append(failed, pkg.importPath)
		}
	}
	fmt.Printf("realpool: %d passed, %d failed, %d skipped\n", total.passed, total.failed, total.skipped)
	if len(failed) > 0 {
		return fmt.Errorf("realpool: failed: %s", strings.Join(failed, ", "))
	}
	return nil
}

// Cuda runs the CUDA tier: gpuroundtrip's tests that move a request's
// KV pages through a real GPU's memory (TestCUDA*). Off (one line,
// success) unless KVSHARE_CUDA=1 or KVSHARE_CUDA_BUILD is set.
// KVSHARE_CUDA_BUILD=<dir> builds the tier's test binary into dir
// (go test -c) with a script that runs it, for a GPU machine without a
// Go toolchain. KVSHARE_CUDA=1 runs the tier here, bounded by 9
// minutes; a machine without a usable GPU fails it, saying why.
// KVSHARE_CUDA_DEVICE picks the CUDA device, KVSHARE_CUDART the runtime
// library; with KVSHARE_MOONCAKE_DIR set too, the round trip also runs
// over a real Mooncake pool.
func Cuda() error {
	run, out := os.Getenv("KVSHARE_CUDA"), os.Getenv("KVSHARE_CUDA_BUILD")
	switch run {
	case "", "0", "1":
	default:
		return fmt.Errorf("cuda: KVSHARE_CUDA=%q: want 1 (on) or unset", run)
	}
	if run != "1" && out == "" {
		fmt.Println("cuda: off (KVSHARE_CUDA is not 1; set KVSHARE_CUDA=1 on a machine with an NVIDIA GPU to run the CUDA tier, or KVSHARE_CUDA_BUILD=<dir> to build its test binary for one)")
		return nil
	}
	cgo := map[string]string{"CGO_ENABLED": "1"}
	if out != "" {
		dir, err := filepath.Abs(out)
		if err != nil {
			return fmt.Errorf("cuda: KVSHARE_CUDA_BUILD=%q: %w", out, err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("cuda: %w", err)
		}
		bin := filepath.Join(dir, "gpuroundtrip.test")
		if err := inModule("gpuroundtrip", cgo, "go", "test", "-c", "-o", bin, "."); err != nil {
			return fmt.Errorf("cuda: building the test binary: %w", err)
		}
		script := filepath.Join(dir, "run-cuda.sh")
		if err := os.WriteFile(script, []byte(cudaScript), 0o755); err != nil {
			return fmt.Errorf("cuda: %w", err)
		}
		fmt.Printf("cuda: built %s and %s; copy both to the GPU machine and run ./run-cuda.sh there\n", bin, script)
	}
	if run != "1" {
		return nil
	}
	fmt.Println("cuda: running the CUDA tier (gpuroundtrip, TestCUDA*)")
	return inModule("gpuroundtrip", cgo, "go", "test", "-count=1", "-v", "-timeout=9m", "-run", "^TestCUDA", ".")
}

// cudaScript runs the CUDA tier's test binary on a GPU machine.
const cudaScript = `#!/bin/sh
# kvshare's CUDA tier: gpuroundtrip's TestCUDA* tests, from a test binary
# built by "KVSHARE_CUDA_BUILD=<dir> go run mage.go cuda". Needs an NVIDIA
# GPU, its driver (libnvidia-ml.so.1) and the CUDA runtime (libcudart.so,
# .so.13 or .so.12 on the loader's path, or KVSHARE_CUDART=/path/to/it).
# KVSHARE_CUDA_DEVICE picks the device (default 0). Extra arguments go to
# the test binary (e.g. -test.run '^TestCUDAScenarios$').
cd "$(dirname "$0")" || exit 1
KVSHARE_CUDA=1 exec ./gpuroundtrip.test -test.v -test.count=1 -test.timeout=9m -test.run '^TestCUDA' "$@"
`

// realPoolExtra lists the packages outside mooncakedrv whose tests belong
// to the real-pool tier, as {module folder, package pattern}; every
// package of mooncakedrv that has tests is in the tier already.
var realPoolExtra = [][2]string{{"tools", "./..."}, {"gpuroundtrip", "./..."}}

// realPoolPackage is one test binary of the tier.
type realPoolPackage struct {
	module, importPath, dir, binary string
}

// realPoolPackages lists the tier's packages: those of mooncakedrv with
// tests, then realPoolExtra's.
func realPoolPackages() ([]realPoolPackage, error) {
	lists := append([][2]string{{"mooncakedrv", "./..."}}, realPoolExtra...)
	var pkgs []realPoolPackage
	for _, l := range lists {
		cmd := exec.Command("go", "list", "-f", "{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}", l[1])
		cmd.Dir = l[0]
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("realpool: go list %s in %s: %w", l[1], l[0], err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if path, dir, ok := strings.Cut(line, " "); ok {
				pkgs = append(pkgs, realPoolPackage{module: l[0], importPath: path, dir: dir})
			}
		}
	}
	if len(pkgs) == 0 {
		return nil, errors.New("realpool: no package with tests found")
	}
	return pkgs, nil
}

// privateNetwork returns the command prefix that runs a test binary in a
// network namespace of its own with only lo, up, and says where tests
// run; an empty prefix (loopback) when not root or unshare cannot.
func privateNetwork() ([]string, string) {
	if os.Geteuid() != 0 {
		return nil, "on loopback (not root, so no private network namespace)"
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return nil, "on loopback (no unshare, so no private network namespace)"
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		return nil, "on loopback (no ip command to bring lo up in a private network namespace)"
	}
	script := "'" + ip + `' link set lo up && exec "$@"`
	if out, err := exec.Command(unshare, "--net", "sh", "-c", script, "sh", "true").CombinedOutput(); err != nil {
		return nil, fmt.Sprintf("on loopback (unshare --net failed: %v: %s)", err, strings.TrimSpace(string(out)))
	}
	return []string{unshare, "--net", "sh", "-c", script, "sh"}, "in a private network namespace (unshare --net, only lo, up)"
}

// realPoolEnv is the tests' environment: this one, with the Go toolchain
// first on PATH (tests build small helper programs).
func realPoolEnv() ([]string, error) {
	goroot, err := sh.Output("go", "env", "GOROOT")
	if err != nil {
		return nil, fmt.Errorf("realpool: go env GOROOT: %w", err)
	}
	env := append(os.Environ(), "PATH="+filepath.Join(goroot, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"), "CGO_ENABLED=1")
	return env, nil
}

// testCounts counts tests (subtests included) by outcome.
type testCounts struct{ passed, failed, skipped int }

func (c *testCounts) add(o testCounts) {
	c.passed += o.passed
	c.failed += o.failed
	c.skipped += o.skipped
}

// testEvent is one line of go tool test2json's output.
type testEvent struct {
	Action, Test, Output string
}

// runTestBinary runs one test binary under test2json (args, from the
// package's folder), prints the output of failed tests only, and fails on
// a failed test, a non-zero exit, no test run, or a skip that says the
// tier is off.
func runTestBinary(pkg realPoolPackage, env, args []string) (testCounts, error) {
	var counts testCounts
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env, cmd.Stderr = pkg.dir, env, os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return counts, err
	}
	if err := cmd.Start(); err != nil {
		return counts, err
	}
	outputs := map[string]*strings.Builder{}
	var skips []string
	tierOff := false
	dec := json.NewDecoder(stdout)
	for {
		var ev testEvent
		if err := dec.Decode(&ev); err != nil {
			break
		}
		if outputs[ev.Test] == nil {
			outputs[ev.Test] = &strings.Builder{}
		}
		switch ev.Action {
		case "output":
			outputs[ev.Test].WriteString(ev.Output)
			tierOff = tierOff || strings.Contains(ev.Output, "real-pool tier off")
		case "pass":
			if ev.Test != "" {
				counts.passed++
			}
		case "skip":
			if ev.Test != "" {
				counts.skipped++
				skips = append(skips, ev.Test+": "+skipReason(outputs[ev.Test].String()))
			}
		case "fail":
			if ev.Test != "" {
				counts.failed++
				fmt.Print(outputs[ev.Test].String())
			}
		}
	}
	_, _ = io.Copy(io.Discard, stdout)
	waitErr := cmd.Wait()
	for _, s := range skips {
		fmt.Printf("realpool:   skipped %s\n", s)
	}
	fmt.Printf("realpool: %s: %d passed, %d failed, %d skipped\n", pkg.importPath, counts.passed, counts.failed, counts.skipped)
	switch {
	case waitErr != nil || counts.failed > 0:
		if counts.failed == 0 { // a panic, a timeout, a failing TestMain
			fmt.Print(outputs[""].String())
		}
		return counts, fmt.Errorf("%d failed, exit: %v", counts.failed, waitErr)
	case tierOff:
		return counts, errors.New("a test skipped as if the tier were off although KVSHARE_MOONCAKE_DIR is set")
	case counts.passed == 0:
		return counts, errors.New("ran no test")
	}
	return counts, nil
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
	"mooncakedrv": {"contract", "rowbatch", "scheduler", "mooncakesdk", "github.com/ebitengine/purego", "github.com/BurntSushi/toml"},
	"tools":       {"*"},
	"telemetry": {"contract", "binding", "mooncakedrv", "rowbatch", "scheduler", "mooncakesdk",
		"github.com/ebitengine/purego", "github.com/BurntSushi/toml",
		"go.opentelemetry.io/otel/metric", "go.opentelemetry.io/otel/attribute", "github.com/cespare/xxhash"},
	"gpuroundtrip": {"contract", "keys", "rowbatch", "scheduler", "binding", "memdrv", "mooncakesdk", "mooncakedrv",
		"github.com/ebitengine/purego", "github.com/BurntSushi/toml", "github.com/NVIDIA/go-nvml"},
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
