//go:build mage

// The kvshare build. Every target works on a machine with only Go and gcc
// (the race detector needs cgo); run them with `go run mage.go <target>`.
// The targets are short; their machinery lives in the root module's
// build/… packages, which have tests of their own.
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/magefile/mage/mg"

	"github.com/kvshare/kvshare/build/checks"
	"github.com/kvshare/kvshare/build/consumer"
	"github.com/kvshare/kvshare/build/deps"
	"github.com/kvshare/kvshare/build/firstbuild"
	"github.com/kvshare/kvshare/build/modules"
	"github.com/kvshare/kvshare/build/mutate"
	"github.com/kvshare/kvshare/build/python"
	"github.com/kvshare/kvshare/build/release"
	"github.com/kvshare/kvshare/build/steps"
	"github.com/kvshare/kvshare/build/targetargs"
	"github.com/kvshare/kvshare/build/tier"
)

// repo is the repository's list of modules (build/modules).
var repo = modules.Repo

// Build compiles every package of every workspace module.
func Build() error {
	return goCmd(os.Stdout, nil, "build", "work")
}

// Test runs the CPU tests of every workspace module under the race
// detector (with the nvml tag, so NVML discovery is tested too), with
// go test's -timeout scaled by KVSHARE_WAIT_SCALE.
func Test() error { return test(os.Stdout) }

func test(w io.Writer) error {
	timeout, err := checks.TestTimeout()
	if err != nil {
		return err
	}
	return goCmd(w, append([]string{"CGO_ENABLED=1"}, checks.CgoEnv("nvml")...), "test", "-race", "-count=1", timeout, "-tags=nvml", "work")
}

// Selftest runs the conformance suite's self-test alone (every broken
// driver of memdrv/broken must be caught by its check, and every check
// pass against the conforming driver), under the race detector.
func Selftest() error {
	timeout, err := checks.TestTimeout()
	if err != nil {
		return err
	}
	return goCmd(os.Stdout, []string{"CGO_ENABLED=1"}, "test", "-race", "-count=1", timeout, "-run", "^TestSelfTest", "./conformance")
}

// Lint runs go vet, staticcheck (the version the root module's tool
// directive pins), go mod tidy -diff and a gofmt check on every module
// (gofmt on the outside consumers too); any finding fails it.
func Lint() error { return lint(os.Stdout) }

func lint(w io.Writer) error {
	if err := repo.CheckWork("."); err != nil {
		return err
	}
	return checks.Lint(".", repo, w)
}

// Deps checks that every module's packages (tests aside) import only
// what build/modules allows it, that go.work uses exactly the modules it
// lists, that every go.mod in the tree is listed, and that every sibling
// requirement names a release version with a replace for the repository.
func Deps() error { return checkDeps(os.Stdout) }

func checkDeps(w io.Writer) error {
	for _, check := range []func(string) error{repo.CheckWork, repo.CheckTree, repo.CheckRequirements} {
		if err := check("."); err != nil {
			return err
		}
	}
	if err := deps.Check(".", repo, deps.GoList); err != nil {
		return err
	}
	fmt.Fprintln(w, "deps: every module imports only what build/modules allows; go.work and every go.mod agree with it")
	return nil
}

// ModulesDoc writes docs/modules.md, the tables of every module and
// outside consumer with what each imports and pulls in, from
// build/modules and what go list says the packages import (each module
// alone, with its tags). The root module's tests fail while the file
// disagrees with the code.
func ModulesDoc() error { return repo.WriteDoc(".", os.Stdout) }

// Standalone builds, vets and tests each module alone (GOWORK=off), as a
// team vendoring one module would.
func Standalone() error { return standalone(os.Stdout) }

func standalone(w io.Writer) error { return checks.Standalone(".", repo, w) }

// Bench runs every module's benchmarks once (they measure, never assert),
// then kvshare bench with short settings (measurements 1–4; 5 too when
// KVSHARE_MOONCAKE_DIR names a Mooncake folder); KVSHARE_BENCHTIME sets
// -benchtime (default 1s).
func Bench() error {
	benchtime := os.Getenv("KVSHARE_BENCHTIME")
	if benchtime == "" {
		benchtime = "1s"
	}
	return checks.Bench(".", repo, benchtime, os.Getenv(tier.EnvMooncakeDir), os.Stdout)
}

// Python checks the node's Python client (clients/python) under
// Debian's /usr/bin/python3: its pytest suite against real node
// processes (no test collected fails it), the two-engine example
// (examples/python-engine) and the README's offline install in a
// temporary folder.
func Python() error { return pythonCheck(os.Stdout) }

func pythonCheck(w io.Writer) error { return python.Check(".", w) }

// CI runs what .ci/run runs: lint, deps, test, the Python client,
// standalone, the outside consumers, the quiet first build and the short
// soak, in that order.
// It prints one line per step (name, time, result) and, for a step that
// fails, that step's whole output; `go run mage.go -v ci` shows every
// step's output as it comes.
func CI() error {
	return steps.Run("ci", []steps.Step{
		{Name: "lint", Run: lint}, {Name: "deps", Run: checkDeps}, {Name: "test", Run: test},
		{Name: "python", Run: pythonCheck},
		{Name: "standalone", Run: standalone}, {Name: "consumers", Run: consumers},
		{Name: "quiet", Run: quiet}, {Name: "soakShort", Run: soakShort},
	}, os.Stdout, mg.Verbose())
}

// Consumers builds a module proxy with dist into a temporary folder and
// runs every outside consumer (examples/consumer-*) against it from a
// temporary folder with a fresh module cache: go mod tidy, go mod
// vendor, go vet, go build, the program; its go.mod must have no
// replace, its vendor/modules.txt only what it needs, its output every
// byte round-tripped. The Redis consumer runs against a loopback
// redis-server the target starts (KVSHARE_REDIS_SERVER, else
// redis-server on PATH); with neither it is built, not run, and says so.
func Consumers() error { return consumers(os.Stdout) }

func consumers(w io.Writer) error { return consumer.Check(".", w) }

// Quiet builds the kvshare command with an empty build cache, as a new
// user's first `go run ./tools/cmd/kvshare roundtrip` does, and runs the
// round trip: the build must print nothing (no C compiler warnings),
// the command only its own lines.
func Quiet() error { return quiet(os.Stdout) }

func quiet(w io.Writer) error { return firstbuild.Check(".", w) }

// Release makes release VERSION of every module, in this repository:
// each go.mod's kvshare requirements set to VERSION, go mod tidy in each
// module, one commit, a tag per module (binding/VERSION, the root
// VERSION). Refuses a dirty tree, a version that is not semver and one
// already tagged. `release VERSION --dry-run` prints the plan and
// changes nothing. Pushing the tags is yours to do.
func Release(version string) error {
	plan, err := release.Plan(".", repo, version)
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
		v, err := repo.Required(".")
		if err != nil {
			return err
		}
		version = v
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	return release.Dist(".", repo, abs, version, os.Stdout)
}

// Soak runs `kvshare soak` for ten minutes: four backends over the
// embedded in-memory store (and, when KVSHARE_MOONCAKE_DIR is set, then
// over a loopback pool started from it) with publishes, fetches, cancels
// and shutdowns at random, seeded and printed, every fetched byte and
// every promise at shutdown checked. KVSHARE_SOAK_SEED sets the seed.
func Soak() error { return soak(os.Stdout, "") }

// SoakShort is Soak for one minute (each store); CI runs it.
func SoakShort() error { return soakShort(os.Stdout) }

func soakShort(w io.Writer) error { return soak(w, "-short") }

func soak(w io.Writer, length string) error {
	args := []string{"run", "./tools/cmd/kvshare", "soak"}
	if length != "" {
		args = append(args, length)
	}
	if seed := os.Getenv("KVSHARE_SOAK_SEED"); seed != "" {
		args = append(args, "-seed", seed)
	}
	if err := goCmd(w, nil, args...); err != nil {
		return fmt.Errorf("soak: %w", err)
	}
	if dir := os.Getenv(tier.EnvMooncakeDir); dir != "" {
		if err := goCmd(w, nil, append(args, "--mooncake-dir", dir)...); err != nil {
			return fmt.Errorf("soak over a pool from %s: %w", dir, err)
		}
	}
	return nil
}

// Realpool runs the real-pool tier: the tests that start a real Mooncake
// pool. Off (one line, success) when KVSHARE_MOONCAKE_DIR is unset; when
// set it must be the absolute path of a usable Mooncake folder (bin/,
// lib/), else it fails saying why. It builds every test binary first,
// then runs them one at a time, inside a private network namespace when
// root and unshare allow it, else on loopback, then a short soak over a
// pool. Failures are shown, passes counted; a test that skips as if the
// tier were off, or a binary that runs no test, fails it.
// KVSHARE_REALPOOL_TIMEOUT sets each binary's -test.timeout (default 20m).
func Realpool() error {
	return tier.Realpool(".", repo, os.Getenv, os.Stdout)
}

// Redis runs the Redis tier: the tests that start a real redis-server.
// Off (one line, success) when KVSHARE_REDIS_SERVER is unset; when set
// it must be the absolute path of an executable redis-server whose
// --version answers, else it fails saying why. It builds every test
// binary first (redisdrv, tools), then runs them one at a time, inside a
// private network namespace when root and unshare allow it, else on
// loopback, then a short soak over a server of its own and another over
// a three-node cluster of its own (redis-cli beside the binary), each
// timed. Failures are shown, passes counted; a test that skips as if the
// tier were off, or a binary that runs no test, fails it.
// KVSHARE_REDIS_TIMEOUT sets each binary's -test.timeout (default 20m).
func Redis() error {
	return tier.Redis(".", repo, os.Getenv, os.Stdout)
}

// Cuda runs the CUDA tier: gpuroundtrip's tests that move a request's
// KV pages through a real GPU's memory (TestCUDA*). Off (one line,
// success) unless KVSHARE_CUDA=1 or KVSHARE_CUDA_BUILD is set.
// KVSHARE_CUDA_BUILD=<dir> builds the tier's test binary into dir with a
// script that runs it, for a GPU machine without a Go toolchain.
// KVSHARE_CUDA=1 runs the tier here, bounded by 9 minutes; a machine
// without a usable GPU fails it, saying why. KVSHARE_CUDA_DEVICE picks
// the CUDA device, KVSHARE_CUDART the runtime library; with
// KVSHARE_MOONCAKE_DIR set too, the round trip also runs over a real
// Mooncake pool.
func Cuda() error {
	return tier.Cuda(".", os.Getenv, os.Stdout)
}

// Mutate runs mutation testing with gremlins (pinned; not part of CI;
// slow: hours for every module on two cores): per module the efficacy,
// killed ÷ (killed + lived), its counts and each lived mutant; fails
// under 95 % or on a lived mutant in a guarded area (verdict mapper,
// ledger, access-end evidence, admission, result recording). Equivalent
// mutants are listed with why in each package's mutants.txt. Options:
// KVSHARE_MUTATE_MODULES (comma-separated), KVSHARE_MUTATE_FILES (a
// regexp on module-relative paths), KVSHARE_MUTATE_COEFFICIENT (default
// 10), KVSHARE_MUTATE_WORKERS (default 1), KVSHARE_MUTATE_GOAL (95).
func Mutate() error {
	s, err := mutate.FromEnv(".", os.Getenv)
	if err != nil {
		return err
	}
	return mutate.Run(".", repo, s, os.Stdout)
}

// goCmd runs the go command at the root with env added, its output
// (standard output and error) written to w.
func goCmd(w io.Writer, env []string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Env = append(os.Environ(), env...)
	return cmd.Run()
}
