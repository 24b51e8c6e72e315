//go:build mage

// The kvshare build. Every target works on a machine with only Go and gcc
// (the race detector needs cgo); run them with `go run mage.go <target>`.
package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/magefile/mage/sh"

	"github.com/kvshare/kvshare/build/consumer"
	"github.com/kvshare/kvshare/build/deps"
	"github.com/kvshare/kvshare/build/firstbuild"
	buildmodules "github.com/kvshare/kvshare/build/modules"
	"github.com/kvshare/kvshare/build/release"
	"github.com/kvshare/kvshare/build/targetargs"
)

// Build compiles every package of every workspace module.
func Build() error {
	return sh.RunV("go", "build", "work")
}

// Test runs the CPU tests of every workspace module under the race
// detector (with the nvml tag, so NVML discovery is tested too).
func Test() error {
	return sh.RunWithV(map[string]string{"CGO_ENABLED": "1"}, "go", "test", "-race", "-count=1", "-tags=nvml", "work")
}

// Lint runs go vet, staticcheck (the version the root module's tool
// directive pins), go mod tidy -diff and a gofmt check on every module;
// any finding fails it.
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
		// A tidy go.mod, so a release's tidy changes only versions.
		if err := inModule(m, map[string]string{"GOWORK": "off"}, "go", "mod", "tidy", "-diff"); err != nil {
			failed = append(failed, m+": go mod tidy -diff")
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
		if t := tags(m); t != "-tags=" {
			steps = [][]string{
				{"go", "build", testTags(m), "./..."},
				{"go", "vet", t, "./..."},
				{"go", "test", "-count=1", testTags(m), "./..."},
			}
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

// CI runs what .ci/run runs: lint, deps, test, standalone, the outside
// consumers, the quiet first build and the short soak, in that order,
// printing the time each took.
func CI() error {
	steps := []struct {
		name string
		run  func() error
	}{{"lint", Lint}, {"deps", Deps}, {"test", Test}, {"standalone", Standalone},
		{"consumers", Consumers}, {"quiet", Quiet}, {"soakShort", SoakShort}}
	for _, st := range steps {
		start := time.Now()
		err := st.run()
		fmt.Printf("ci: %s took %.0f s\n", st.name, time.Since(start).Seconds())
		if err != nil {
			return fmt.Errorf("ci: %s: %w", st.name, err)
		}
	}
	return nil
}

// Release makes release VERSION of every module, in this repository:
// each go.mod's kvshare requirements set to VERSION, go mod tidy in each
// module, one commit, a tag per module (binding/VERSION, the root
// VERSION). Refuses a dirty tree, a version that is not semver and one
// already tagged. `release VERSION --dry-run` prints the plan and
// changes nothing. Pushing the tags is yours to do.
func Release(version string) error {
	plan, err := release.Plan(".", buildmodules.Repo, version)
	if err != nil {
		return err
	}
	if os.Getenv(targetargs.DryRun) == "1" {
		fmt.Println("release: dry run, nothing changed; the plan:")
		plan.Print(os.Stdout)
		return nil
	}
	return plan.Apply(".", os.Stdout)
}

// Dist writes a Go module proxy into DIR (the GOPROXY file layout)
// holding every module as release VERSION would publish it, from the
// committed tree; `dist DIR VERSION` picks the version, by default the
// one the go.mod files require. Use it with
// GOPROXY=file://DIR,$(go env GOPROXY) GONOSUMDB='github.com/kvshare/*'.
func Dist(dir string) error {
	version := os.Getenv(targetargs.DistVersion)
	if version == "" {
		v, err := buildmodules.Repo.Required(".")
		if err != nil {
			return err
		}
		version = v
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	return release.Dist(".", buildmodules.Repo, abs, version, os.Stdout)
}

// Consumers builds a module proxy with dist into a temporary folder and
// runs every outside consumer (examples/consumer-*) against it from a
// temporary folder with a fresh module cache: go mod tidy, go mod
// vendor, go vet, go build, the program; its go.mod must have no
// replace, its vendor/modules.txt only what it needs, its output every
// byte round-tripped.
func Consumers() error {
	return consumer.Check(".", os.Stdout)
}

// Quiet builds the kvshare command with an empty build cache, as a new
// user's first `go run ./tools/cmd/kvshare roundtrip` does, and runs the
// round trip: the build must print nothing (no C compiler warnings),
// the command only its own lines.
func Quiet() error {
	return firstbuild.Check(".", os.Stdout)
}

// Soak runs `kvshare soak` for ten minutes: four backends over the
// embedded in-memory store (and, when KVSHARE_MOONCAKE_DIR is set, then
// over a loopback pool started from it) with publishes, fetches, cancels
// and shutdowns at random, seeded and printed, every fetched byte and
// every promise at shutdown checked. KVSHARE_SOAK_SEED sets the seed.
func Soak() error { return soak("") }

// SoakShort is Soak for one minute (each store); CI runs it.
func SoakShort() error { return soak("-short") }

func soak(length string) error {
	args := []string{"run", "./tools/cmd/kvshare", "soak"}
	if length != "" {
		args = append(args, length)
	}
	if seed := os.Getenv("KVSHARE_SOAK_SEED"); seed != "" {
		args = append(args, "-seed", seed)
	}
	if err := sh.RunV("go", args...); err != nil {
		return fmt.Errorf("soak: %w", err)
	}
	if dir := os.Getenv("KVSHARE_MOONCAKE_DIR"); dir != "" {
		if err := sh.RunV("go", append(args, "--mooncake-dir", dir)...); err != nil {
			return fmt.Errorf("soak over a pool from %s: %w", dir, err)
		}
	}
	return nil
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
			"go", "test", "-c", "-race", testTags(pkgs[i].module), "-o", pkgs[i].binary, pkgs[i].importPath)
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
	// The short soak over a pool of its own, where the tests ran.
	kvshare := filepath.Join(bins, "kvshare")
	if err := inModule("tools", nil, "go", "build", "-o", kvshare, "./cmd/kvshare"); err != nil {
		return fmt.Errorf("realpool: building kvshare: %w", err)
	}
	soakArgs := append(append([]string(nil), wrap...), kvshare, "soak", "-short", "--mooncake-dir", dir)
	fmt.Println("realpool: kvshare soak -short over a loopback pool")
	soakCmd := exec.Command(soakArgs[0], soakArgs[1:]...)
	soakCmd.Env, soakCmd.Stdout, soakCmd.Stderr = env, os.Stdout, os.Stderr
	if err := soakCmd.Run(); err != nil {
		fmt.Printf("realpool: FAIL kvshare soak over the pool: %v\n", err)
		failed = append(failed, "kvshare soak over the pool")
	}
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
		if err := inModule("gpuroundtrip", cgo, "go", "test", "-c", "-tags=nvml", "-o", bin, "."); err != nil {
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
	return inModule("gpuroundtrip", cgo, "go", "test", "-tags=nvml", "-count=1", "-v", "-timeout=9m", "-run", "^TestCUDA", ".")
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

// Deps checks that every module's packages (tests aside) import only
// what build/modules allows it, that go.work uses exactly the modules it
// lists, that every go.mod in the tree is listed, and that every sibling
// requirement names a release version with a replace for the repository.
func Deps() error {
	for _, check := range []func(string) error{buildmodules.Repo.CheckWork, buildmodules.Repo.CheckTree, buildmodules.Repo.CheckRequirements} {
		if err := check("."); err != nil {
			return err
		}
	}
	if err := deps.Check(".", buildmodules.Repo, deps.GoList); err != nil {
		return err
	}
	fmt.Println("deps: every module imports only what build/modules allows; go.work and every go.mod agree with it")
	return nil
}

// modules returns the folders of every module, the root first, once
// go.work is checked to use exactly those.
func modules() ([]string, error) {
	if err := buildmodules.Repo.CheckWork("."); err != nil {
		return nil, err
	}
	return buildmodules.Repo.Dirs(), nil
}

// tags selects the build tags a module's own checks need (build/modules
// lists them: the root's magefile is behind the mage tag, gpuroundtrip's
// NVML discovery behind nvml).
func tags(dir string) string {
	m, err := buildmodules.Repo.Find(dir)
	if err != nil {
		return "-tags="
	}
	return "-tags=" + m.Tags
}

// testTags is tags without mage: the magefile is package main without a
// func main, which go test cannot build.
func testTags(dir string) string {
	return strings.Replace(strings.Replace(tags(dir), "mage,", "", 1), "=mage", "=", 1)
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

// gremlinsPkg is the mutation tester Mutate runs, pinned; go install
// builds it from the module proxy (the go command caches the build).
const gremlinsPkg = "github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0"

// mutateModules are the modules Mutate tests when KVSHARE_MUTATE_MODULES
// is unset: those issue 13 sets an efficacy goal for.
var mutateModules = []string{"keys", "rowbatch", "scheduler", "binding", "mooncakesdk", "mooncakedrv", "memdrv"}

// mutateGuard is code where no mutant may live: a file of a module, the
// whole file or only the named functions (methods by their name alone).
type mutateGuard struct {
	module, file, what string
	funcs              []string
}

// mutateGuards are the areas issue 13 allows no lived mutant in: the
// verdict mapper, the ledger, access-end evidence, admission and the
// backend's result recording.
var mutateGuards = []mutateGuard{
	{module: "mooncakedrv", file: "verdict.go", what: "verdict mapper"},
	{module: "mooncakedrv", file: "ledger.go", what: "ledger"},
	{module: "mooncakedrv", file: "operation.go", what: "access-end evidence", funcs: []string{"endAccessLocked"}},
	{module: "mooncakedrv", file: "run.go", what: "access-end evidence", funcs: []string{"callFailure"}},
	{module: "mooncakedrv", file: "settle.go", what: "access-end evidence", funcs: []string{"finish"}},
	{module: "mooncakedrv", file: "admit.go", what: "admission"},
	{module: "binding", file: "validate.go", what: "admission"},
	{module: "rowbatch", file: "check.go", what: "admission"},
	{module: "binding", file: "results.go", what: "result recording"},
}

// Mutate runs mutation testing, module by module, with gremlins (pinned
// by gremlinsPkg; not part of CI). For each module it
// prints its efficacy — killed ÷ (killed + lived) — with its counts and
// every lived mutant (file:line:column, mutator), and it fails when a
// module is under the goal (95 %) or a mutant lives in a guarded area
// (mutateGuards: the verdict mapper, the ledger, access-end evidence,
// admission, result recording).
//
// How it runs, and why:
//   - A snapshot. The workspace's modules (tracked and untracked files,
//     ignored ones left out) are copied to a temporary folder first, so
//     edits made during a long run change nothing; the module under test
//     gets its relative replace directives made absolute there, because
//     gremlins copies the module alone into a work folder of its own,
//     where ../sibling would not resolve. Every go command runs with
//     GOWORK=off (gremlins knows no workspaces), -count=1 (no test
//     result comes from the cache) and -vet=off (a mutant is judged by
//     the tests alone, and each build is quicker).
//   - gremlins is installed (go install, pinned) into the snapshot and
//     run from there, not through go run: go run puts GOROOT/bin first
//     on its child's PATH, which would hide the go shim below.
//   - A go shim (goShimSource), first on gremlins' PATH, passes every go
//     command through, and after gremlins' coverage run adds to the
//     profile the case lists of switches that ran: Go's profile has no
//     block for a case clause's expressions, so gremlins would call each
//     mutant there "not covered" and never run it — every condition of
//     a switch-shaped verdict mapper or admission check, among others.
//     A case list counts as run when its clause or a later one ran, when
//     the default ran, or when the switch ran more often than its
//     clauses did (-covermode=count).
//   - One gremlins run per package, nested packages left to their own
//     run: gremlins gives each mutant a time limit proportional to how
//     long the tests of its whole path took, so a slow package would give
//     a fast one's hanging mutants minutes each.
//   - gremlins' default mutators (arithmetic, conditionals boundary and
//     negation, increment/decrement, negatives). Each mutant runs its own
//     package's tests, without -race (each mutant is a new build).
//   - Every process of the run gets 4 GiB of address space at most
//     (mutateMemory): a mutant that loops allocating dies of it, killed,
//     instead of taking the machine's memory until its time runs out.
//   - One worker, and a timeout coefficient of 10: a mutant's limit is
//     10 × its package's coverage run (compilation included). With more
//     workers, or a tight limit, on a loaded machine a slow but passing
//     run turns into a timeout; with these, two runs in a row give the
//     same figures. A timed-out mutant counts as neither killed nor lived
//     (gremlins' rule), and so does one that does not compile. On two
//     cores, two workers and a coefficient of 5 take about a third of
//     the time and gave the same lived mutants run after run; only a
//     slow kill may count as a timeout instead.
//   - Equivalent mutants. A lived mutant that changes nothing anyone can
//     observe (a value returned but never read, a bound whose two sides
//     give the same answer) cannot be killed by a test. Each is listed,
//     with why, in the package's doc.go, one list item per mutant whose
//     first line reads
//   - `file.go` in `function`: `code` (MUTATOR, ...): why
//     (code: the text of the line the mutant changes, holding the
//     mutated operator). Mutate counts those as equivalent, not lived,
//     prints them apart, and warns about an entry no mutant matched. The
//     efficacy gremlins itself would print (equivalents as lived) is
//     printed too.
//
// Options, from the environment:
//
//	KVSHARE_MUTATE_MODULES      modules to test, comma-separated (default keys,rowbatch,scheduler,binding,mooncakesdk,mooncakedrv,memdrv)
//	KVSHARE_MUTATE_FILES        a regexp on module-relative file paths: mutate only the files it matches
//	KVSHARE_MUTATE_COEFFICIENT  gremlins' timeout coefficient (default 10)
//	KVSHARE_MUTATE_WORKERS      gremlins' workers (default 1)
//	KVSHARE_MUTATE_GOAL         the efficacy goal in percent (default 95)
func Mutate() error {
	cfg, err := mutateConfig()
	if err != nil {
		return err
	}
	restore, err := limitMemory(mutateMemory)
	if err != nil {
		return fmt.Errorf("mutate: %w", err)
	}
	defer restore()
	snap, err := os.MkdirTemp("", "kvshare-mutate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(snap)
	mods, err := modules()
	if err != nil {
		return err
	}
	for _, m := range mods {
		if m != "." {
			if err := snapshotModule(m, filepath.Join(snap, m)); err != nil {
				return fmt.Errorf("mutate: snapshot of %s: %w", m, err)
			}
		}
	}
	bin, err := mutateTools(snap)
	if err != nil {
		return fmt.Errorf("mutate: %w", err)
	}
	var results []*mutateResult
	for _, m := range cfg.modules {
		fmt.Printf("== %s\n", m)
		r, err := mutateModule(cfg, snap, bin, m)
		if err != nil {
			return fmt.Errorf("mutate: %s: %w", m, err)
		}
		r.print()
		results = append(results, r)
	}
	fmt.Println("== mutate summary")
	fmt.Printf("%-12s %9s %7s %6s %11s %10s %12s %11s %9s\n",
		"module", "efficacy", "killed", "lived", "equivalent", "timed-out", "not-covered", "not-viable", "gremlins")
	var failed []string
	for _, r := range results {
		fmt.Printf("%-12s %8.2f%% %7d %6d %11d %10d %12d %11d %8.2f%%\n", r.module, r.efficacy(),
			r.killed, len(r.lived), len(r.equivalent), r.timedOut, r.notCovered, r.notViable, r.rawEfficacy())
		if r.killed+len(r.lived) > 0 && r.efficacy() < cfg.goal {
			failed = append(failed, fmt.Sprintf("%s: efficacy %.2f%% under %.0f%%", r.module, r.efficacy(), cfg.goal))
		}
		for _, l := range r.lived {
			if l.guard != "" {
				failed = append(failed, fmt.Sprintf("%s: lived in the %s: %s", r.module, l.guard, l))
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("mutate: goals missed:\n  %s", strings.Join(failed, "\n  "))
	}
	fmt.Printf("mutate: every module at or above %.0f%%, no lived mutant in a guarded area\n", cfg.goal)
	return nil
}

// mutateMemory bounds the address space of every process of a mutation
// run (gremlins, go, the compiler, each mutant's test binary): a mutant
// that loops allocating would otherwise take the machine's memory before
// its time limit ends it. Bounded, it dies of "out of memory" at once,
// and its tests fail: killed.
const mutateMemory = 4 << 30

// limitMemory lowers this process's soft address-space limit to n bytes
// (children inherit it) and returns what restores the old one.
func limitMemory(n uint64) (func(), error) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &old); err != nil {
		return nil, err
	}
	if old.Cur <= n {
		return func() {}, nil
	}
	lim := old
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		return nil, err
	}
	return func() { _ = syscall.Setrlimit(syscall.RLIMIT_AS, &old) }, nil
}

// mutateSettings are Mutate's options.
type mutateSettings struct {
	modules              []string
	files                *regexp.Regexp
	coefficient, workers string
	goal                 float64
}

// mutateConfig reads Mutate's options from the environment.
func mutateConfig() (mutateSettings, error) {
	cfg := mutateSettings{modules: mutateModules, coefficient: "10", workers: "1", goal: 95}
	if v := os.Getenv("KVSHARE_MUTATE_MODULES"); v != "" {
		cfg.modules = nil
		for _, m := range strings.Split(v, ",") {
			if m = strings.TrimSpace(m); m != "" {
				if _, err := os.Stat(filepath.Join(m, "go.mod")); err != nil || m == "." {
					return cfg, fmt.Errorf("mutate: KVSHARE_MUTATE_MODULES: %q is not a module folder", m)
				}
				cfg.modules = append(cfg.modules, filepath.Clean(m))
			}
		}
	}
	if v := os.Getenv("KVSHARE_MUTATE_FILES"); v != "" {
		re, err := regexp.Compile(v)
		if err != nil {
			return cfg, fmt.Errorf("mutate: KVSHARE_MUTATE_FILES: %w", err)
		}
		cfg.files = re
	}
	for _, o := range []struct {
		name string
		dst  *string
	}{{"KVSHARE_MUTATE_COEFFICIENT", &cfg.coefficient}, {"KVSHARE_MUTATE_WORKERS", &cfg.workers}} {
		if v := os.Getenv(o.name); v != "" {
			if n, err := strconv.Atoi(v); err != nil || n < 1 {
				return cfg, fmt.Errorf("mutate: %s=%q: want a positive integer", o.name, v)
			}
			*o.dst = v
		}
	}
	if v := os.Getenv("KVSHARE_MUTATE_GOAL"); v != "" {
		g, err := strconv.ParseFloat(v, 64)
		if err != nil || g < 0 || g > 100 {
			return cfg, fmt.Errorf("mutate: KVSHARE_MUTATE_GOAL=%q: want a percentage", v)
		}
		cfg.goal = g
	}
	return cfg, nil
}

// snapshotModule copies a module's tracked and untracked, not ignored,
// files into dst.
func snapshotModule(module, dst string) error {
	out, err := sh.Output("git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", module)
	if err != nil {
		return err
	}
	for _, f := range strings.Split(out, "\x00") {
		if f == "" {
			continue
		}
		rel, err := filepath.Rel(module, f)
		if err != nil {
			return err
		}
		info, err := os.Lstat(f)
		if errors.Is(err, os.ErrNotExist) {
			continue // tracked but deleted in the working tree
		}
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, data, info.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// mutateResult is one module's figures.
type mutateResult struct {
	module                                  string
	killed, timedOut, notCovered, notViable int
	lived, equivalent                       []mutant
	entries                                 []*equivalentEntry // the module's doc.go lists
}

// mutant is one mutant that lived: file (module-relative), position and
// mutator; guard names the guarded area it is in, if any, why the doc.go
// entry that calls it equivalent.
type mutant struct {
	file, mutator, guard, why string
	line, column              int
}

func (m mutant) String() string {
	return fmt.Sprintf("%s:%d:%d %s", m.file, m.line, m.column, m.mutator)
}

// efficacy is killed ÷ (killed + lived), equivalent mutants left out.
func (r *mutateResult) efficacy() float64 {
	if r.killed+len(r.lived) == 0 {
		return 0
	}
	return 100 * float64(r.killed) / float64(r.killed+len(r.lived))
}

// rawEfficacy is the efficacy gremlins prints: equivalents count as lived.
func (r *mutateResult) rawEfficacy() float64 {
	all := r.killed + len(r.lived) + len(r.equivalent)
	if all == 0 {
		return 0
	}
	return 100 * float64(r.killed) / float64(all)
}

func (r *mutateResult) print() {
	fmt.Printf("%s: efficacy %.2f%% (killed %d, lived %d, equivalent %d, timed out %d, not covered %d, not viable %d; gremlins' figure %.2f%%)\n",
		r.module, r.efficacy(), r.killed, len(r.lived), len(r.equivalent), r.timedOut, r.notCovered, r.notViable, r.rawEfficacy())
	for _, l := range r.lived {
		if l.guard != "" {
			fmt.Printf("  lived: %s  [%s]\n", l, l.guard)
		} else {
			fmt.Printf("  lived: %s\n", l)
		}
	}
	for _, e := range r.equivalent {
		fmt.Printf("  equivalent: %s  (%s)\n", e, e.why)
	}
	for _, e := range r.entries {
		if !e.matched && e.mutated {
			fmt.Printf("  warning: no lived mutant matched the equivalent-mutant entry %s\n", e)
		}
	}
}

// gremlinsReport is the part of gremlins' -o JSON that Mutate reads.
type gremlinsReport struct {
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

// mutateModule runs gremlins on each package of a module in the
// snapshot and adds up the figures.
func mutateModule(cfg mutateSettings, snap, bin, module string) (*mutateResult, error) {
	res := &mutateResult{module: module}
	root := filepath.Join(snap, module)
	if err := absoluteReplaces(root); err != nil {
		return res, err
	}
	env := mutateEnv(snap, bin)
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
		entries, err := equivalentEntries(root, pkg)
		if err != nil {
			return res, err
		}
		res.entries = append(res.entries, entries...)
		excludes := nestedPackages(pkg, pkgs)
		files, err := packageFiles(filepath.Join(root, pkg))
		if err != nil {
			return res, err
		}
		mutated := 0
		for _, f := range files {
			if cfg.files != nil && !cfg.files.MatchString(path.Join(pkg, f)) {
				excludes = append(excludes, "^"+regexp.QuoteMeta(f)+"$")
				continue
			}
			mutated++
			for _, e := range entries {
				e.mutated = e.mutated || e.file == path.Join(pkg, f)
			}
		}
		if mutated == 0 {
			continue
		}
		report := filepath.Join(snap, fmt.Sprintf("%s-%d.json", strings.ReplaceAll(module, "/", "_"), i))
		args := []string{"unleash", "--workers", cfg.workers,
			"--timeout-coefficient", cfg.coefficient, "--output-statuses", "lt", "-o", report}
		for _, e := range excludes {
			args = append(args, "--exclude-files", e)
		}
		args = append(args, filepath.Join(root, pkg))
		fmt.Printf("-- %s/%s\n", module, pkg)
		cmd := exec.Command(filepath.Join(bin, "gremlins"), args...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = root, env, os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return res, fmt.Errorf("gremlins on %s: %w", pkg, err)
		}
		if err := res.add(report, root, pkg); err != nil {
			return res, err
		}
	}
	less := func(a, b mutant) int {
		return cmp.Or(strings.Compare(a.file, b.file), cmp.Compare(a.line, b.line),
			cmp.Compare(a.column, b.column), strings.Compare(a.mutator, b.mutator))
	}
	slices.SortFunc(res.lived, less)
	slices.SortFunc(res.equivalent, less)
	return res, nil
}

// add reads one gremlins report of the package folder pkg (relative to
// the module root) into r.
func (r *mutateResult) add(report, root, pkg string) error {
	data, err := os.ReadFile(report)
	if errors.Is(err, os.ErrNotExist) {
		return nil // gremlins found no mutant, so wrote no report
	}
	if err != nil {
		return err
	}
	var rep gremlinsReport
	if err := json.Unmarshal(data, &rep); err != nil {
		return fmt.Errorf("reading %s: %w", report, err)
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
				r.killed++
			case "LIVED":
				l := mutant{file: file, mutator: m.Type, line: m.Line, column: m.Column}
				l.guard = guardOf(r.module, src, l)
				if e := matchEquivalent(r.entries, src, l); e != nil {
					e.matched = true
					l.why = e.String()
					r.equivalent = append(r.equivalent, l)
				} else {
					r.lived = append(r.lived, l)
				}
			case "TIMED OUT":
				r.timedOut++
			case "NOT COVERED":
				r.notCovered++
			case "NOT VIABLE":
				r.notViable++
			}
		}
	}
	return nil
}

// source is one parsed file of the snapshot, to place mutants in it.
type source struct {
	fset  *token.FileSet
	file  *ast.File
	lines []string
}

func readSource(root, file string) (*source, error) {
	data, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, data, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	return &source{fset: fset, file: f, lines: strings.Split(string(data), "\n")}, nil
}

// enclosing names the top-level declaration holding line: a function or
// method (by its name alone), or the first name of a var or const.
func (s *source) enclosing(line int) string {
	for _, d := range s.file.Decls {
		if s.fset.Position(d.Pos()).Line > line || s.fset.Position(d.End()).Line < line {
			continue
		}
		switch d := d.(type) {
		case *ast.FuncDecl:
			return d.Name.Name
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				if v, ok := spec.(*ast.ValueSpec); ok && len(v.Names) > 0 &&
					s.fset.Position(v.Pos()).Line <= line && line <= s.fset.Position(v.End()).Line {
					return v.Names[0].Name
				}
			}
		}
	}
	return ""
}

// guardOf names the guarded area a lived mutant is in ("" if none).
func guardOf(module string, src *source, m mutant) string {
	for _, g := range mutateGuards {
		if g.module != module || g.file != m.file {
			continue
		}
		if len(g.funcs) == 0 {
			return g.what
		}
		if fn := src.enclosing(m.line); slices.Contains(g.funcs, fn) {
			return g.what + " (" + fn + ")"
		}
	}
	return ""
}

// equivalentEntry is one item of a doc.go list of equivalent mutants.
type equivalentEntry struct {
	file, fn, code   string // file is module-relative
	mutators         []string
	mutated, matched bool // its file was mutated; a lived mutant matched it
}

func (e *equivalentEntry) String() string {
	return fmt.Sprintf("%s in %s: `%s` (%s)", e.file, e.fn, e.code, strings.Join(e.mutators, ", "))
}

// equivalentLine is the first line of an equivalent-mutant item in a
// package's documentation (as go/ast's CommentGroup.Text gives it).
var equivalentLine = regexp.MustCompile("^\\s*- `([^`]+\\.go)` in `([^`]+)`: `([^`]+)` \\(([A-Z_]+(?:, [A-Z_]+)*)\\):")

// equivalentEntries reads the equivalent mutants listed in the doc.go of
// the package folder pkg (relative to the module root), if it has one.
func equivalentEntries(root, pkg string) ([]*equivalentEntry, error) {
	doc := filepath.Join(root, pkg, "doc.go")
	if _, err := os.Stat(doc); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	f, err := parser.ParseFile(token.NewFileSet(), doc, nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return nil, err
	}
	var entries []*equivalentEntry
	if f.Doc == nil {
		return nil, nil
	}
	for _, line := range strings.Split(f.Doc.Text(), "\n") {
		if m := equivalentLine.FindStringSubmatch(line); m != nil {
			entries = append(entries, &equivalentEntry{file: path.Join(pkg, m[1]), fn: m[2], code: m[3],
				mutators: strings.Split(m[4], ", ")})
		}
	}
	return entries, nil
}

// matchEquivalent returns the entry that calls a lived mutant equivalent:
// same file, function and mutator, and its code on the mutant's line
// covering the mutated operator; nil if none does.
func matchEquivalent(entries []*equivalentEntry, src *source, m mutant) *equivalentEntry {
	if m.line < 1 || m.line > len(src.lines) {
		return nil
	}
	text, col := src.lines[m.line-1], m.column-1
	fn := src.enclosing(m.line)
	for _, e := range entries {
		if e.file != m.file || e.fn != fn || !slices.Contains(e.mutators, m.mutator) {
			continue
		}
		for from := 0; ; {
			i := strings.Index(text[from:], e.code)
			if i < 0 {
				break
			}
			if start := from + i; start <= col && col < start+len(e.code) {
				return e
			}
			from += i + 1
		}
	}
	return nil
}

// absoluteReplaces rewrites a snapshot module's relative replace
// directives to absolute paths in the snapshot.
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

// mutateEnv is the environment of every command Mutate runs in the
// snapshot: no workspace, no cached test results, temporary files
// (gremlins' work folders among them) inside the snapshot, and the go
// shim in bin ahead of the go command on PATH.
func mutateEnv(snap, bin string) []string {
	tmp := filepath.Join(snap, ".tmp")
	_ = os.MkdirAll(tmp, 0o755)
	return append(os.Environ(), "GOWORK=off", "TMPDIR="+tmp,
		"GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -count=1 -vet=off"),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// mutateTools installs gremlins and builds the go shim (goShimSource)
// into the snapshot's .bin folder, which it returns.
func mutateTools(snap string) (string, error) {
	bin := filepath.Join(snap, ".bin")
	realGo, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	if realGo, err = filepath.Abs(realGo); err != nil {
		return "", err
	}
	env := append(os.Environ(), "GOWORK=off", "GOBIN="+bin)
	cmd := exec.Command(realGo, "install", gremlinsPkg)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go install %s: %w", gremlinsPkg, err)
	}
	src := filepath.Join(snap, ".goshim")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	files := map[string]string{"go.mod": "module kvshare.local/goshim\n\ngo 1.26\n", "main.go": goShimSource}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	cmd = exec.Command(realGo, "build", "-o", filepath.Join(bin, "go"), ".")
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = src, env, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the go shim: %w", err)
	}
	// The shim finds the real go command here.
	return bin, os.Setenv("KVSHARE_MUTATE_GO", realGo)
}

// goShimSource is the go shim Mutate puts ahead of the go command for
// gremlins: Go's coverage profile has no block for a case clause's
// expressions, so gremlins would call every mutant in them not covered
// and never run it (the conditions of the verdict mapper's switches,
// for one). After gremlins' coverage run the shim adds a block for
// each case list that the counts prove was evaluated.
const goShimSource = `// Command go stands in for the go command in front of gremlins: it runs
// the real one ($KVSHARE_MUTATE_GO) with the same arguments, and after a
// coverage run (go test -coverprofile) it counts (-covermode=count) and
// adds to the profile a block for every case list of an expression switch
// that the counts prove was evaluated, which Go's profile leaves out.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"strings"
)

func main() {
	args := os.Args[1:]
	profile := ""
	if len(args) > 0 && args[0] == "test" {
		for i, a := range args {
			if a == "-coverprofile" && i+1 < len(args) {
				profile = args[i+1]
			} else if v, ok := strings.CutPrefix(a, "-coverprofile="); ok {
				profile = v
			}
		}
		if profile != "" {
			args = append([]string{"test", "-covermode=count"}, args[1:]...)
		}
	}
	cmd := exec.Command(os.Getenv("KVSHARE_MUTATE_GO"), args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() > 0 {
			os.Exit(exit.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "goshim:", err)
		os.Exit(1)
	}
	if profile != "" {
		if err := addCaseBlocks(profile); err != nil {
			fmt.Fprintln(os.Stderr, "goshim:", err)
			os.Exit(1)
		}
	}
}

// block is one line of a coverage profile.
type block struct {
	startLine, startCol, endLine, endCol int
	count                                int64
}

func (b block) holds(p token.Position) bool {
	after := p.Line > b.startLine || p.Line == b.startLine && p.Column >= b.startCol
	before := p.Line < b.endLine || p.Line == b.endLine && p.Column <= b.endCol
	return after && before
}

// addCaseBlocks appends to the profile a block over the expressions of
// each case clause that was evaluated: one at or before a clause whose
// body ran, every one when the default ran or when the switch ran more
// often than its clauses did (an execution that matched none).
func addCaseBlocks(profile string) error {
	data, err := os.ReadFile(profile)
	if err != nil {
		return err
	}
	module, err := modulePath()
	if err != nil {
		return err
	}
	blocks := map[string][]block{}
	var files []string
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "mode:") {
			continue
		}
		var b block
		var stmts int
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			return fmt.Errorf("%s: bad line %q", profile, line)
		}
		if _, err := fmt.Sscanf(rest, "%d.%d,%d.%d %d %d", &b.startLine, &b.startCol, &b.endLine, &b.endCol, &stmts, &b.count); err != nil {
			return fmt.Errorf("%s: bad line %q: %w", profile, line, err)
		}
		if _, seen := blocks[name]; !seen {
			files = append(files, name)
		}
		blocks[name] = append(blocks[name], b)
	}
	var added strings.Builder
	for _, name := range files {
		rel, ok := strings.CutPrefix(name, module+"/")
		if !ok {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, rel, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		count := func(p token.Position) (n int64, found bool) {
			for _, b := range blocks[name] {
				if b.holds(p) {
					n, found = max(n, b.count), true
				}
			}
			return n, found
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sw, ok := n.(*ast.SwitchStmt)
			if !ok {
				return true
			}
			reached, _ := count(fset.Position(sw.Switch))
			if reached == 0 {
				return true
			}
			var clauses []*ast.CaseClause
			var ran []int64
			var sum, dflt int64
			for _, s := range sw.Body.List {
				c := s.(*ast.CaseClause)
				p := fset.Position(c.Colon)
				p.Column++
				n, _ := count(p)
				sum += n
				if c.List == nil {
					dflt = n
					continue
				}
				clauses = append(clauses, c)
				ran = append(ran, n)
			}
			all := dflt > 0 || reached > sum
			for i, c := range clauses {
				evaluated := all
				for _, n := range ran[i:] {
					evaluated = evaluated || n > 0
				}
				if evaluated {
					from, to := fset.Position(c.Case), fset.Position(c.Colon)
					fmt.Fprintf(&added, "%s:%d.%d,%d.%d 0 1\n", name, from.Line, from.Column, to.Line, to.Column)
				}
			}
			return true
		})
	}
	if added.Len() == 0 {
		return nil
	}
	out, err := os.OpenFile(profile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := out.WriteString(added.String()); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// modulePath reads the module path from ./go.mod (the coverage run is
// started in the module's root).
func modulePath() (string, error) {
	f, err := os.Open("go.mod")
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), "\""), nil
		}
	}
	return "", errors.New("go.mod names no module")
}
`

// nestedPackages returns gremlins exclusion patterns (relative to pkg)
// for the packages under pkg, which get runs of their own.
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
