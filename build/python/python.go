// Package python checks the Python client of the node (clients/python)
// under Debian's interpreter: its pytest suite against real node
// processes, the two-engine example (examples/python-engine), and the
// offline install its README gives, run in a temporary folder. Over a
// real pool (the real-pool tier) it runs the suite's tests that start
// `kvshare node` with the pool's store file.
package python

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Interpreter is the Python the checks run: Debian's, by its path (a
// python3 first on PATH, such as pyenv's, cannot import Debian's
// pytest and numpy).
const Interpreter = "/usr/bin/python3"

// The variables the suite reads (clients/python/tests/conftest.py).
const (
	// EnvKvshare names a built kvshare binary; unset, the suite builds one.
	EnvKvshare = "KVSHARE_BIN"
	// EnvNodeTest names module node's test binary (its TestHelperNode).
	EnvNodeTest = "KVSHARE_TEST_NODE_BIN"
	// EnvNodeStore names a store file the suite's kvshare nodes serve.
	EnvNodeStore = "KVSHARE_NODE_STORE"
)

// The README's offline install, run from the repository's root: a venv
// that sees Debian's packages, and pip with no index and no build
// isolation (setuptools from Debian builds it).
var (
	VenvCommand    = []string{Interpreter, "-m", "venv", "--system-site-packages", "V"}
	InstallCommand = []string{"V/bin/pip", "install", "--no-index", "--no-build-isolation", "./clients/python"}
)

// PoolTests are the suite's files whose nodes serve EnvNodeStore when it
// is set (the others need the node's test control over its own store).
var PoolTests = []string{"tests/test_client.py", "tests/test_bad_input.py"}

// Check runs the suite, the example and the install check from the
// repository at root, printing what they print to w.
func Check(root string, w io.Writer) error {
	tmp, err := os.MkdirTemp("", "kvshare-python-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	env, err := Binaries(root, tmp, w)
	if err != nil {
		return err
	}
	var failed []error
	if err := Pytest(root, env, nil, w); err != nil {
		failed = append(failed, err)
	}
	fmt.Fprintln(w, "python: examples/python-engine/run.py")
	if err := run(root, env, w, Interpreter, "examples/python-engine/run.py"); err != nil {
		failed = append(failed, fmt.Errorf("python: the example: %w", err))
	}
	if err := Install(root, filepath.Join(tmp, "install"), w); err != nil {
		failed = append(failed, err)
	}
	return errors.Join(failed...)
}

// Binaries builds the kvshare command and module node's test binary into
// dir and returns the environment naming them.
func Binaries(root, dir string, w io.Writer) ([]string, error) {
	env, err := kvshareBinary(root, dir, w)
	if err != nil {
		return nil, err
	}
	nodeTest := filepath.Join(dir, "nodetest")
	fmt.Fprintln(w, "python: building module node's test binary")
	if err := run(filepath.Join(root, "node"), nil, w, "go", "test", "-c", "-o", nodeTest, "."); err != nil {
		return nil, fmt.Errorf("python: building node's test binary: %w", err)
	}
	return append(env, EnvNodeTest+"="+nodeTest), nil
}

// kvshareBinary builds the kvshare command into dir and returns the
// environment naming it.
func kvshareBinary(root, dir string, w io.Writer) ([]string, error) {
	kvshare := filepath.Join(dir, "kvshare")
	fmt.Fprintln(w, "python: building kvshare")
	if err := run(filepath.Join(root, "tools"), nil, w, "go", "build", "-o", kvshare, "./cmd/kvshare"); err != nil {
		return nil, fmt.Errorf("python: building kvshare: %w", err)
	}
	return []string{EnvKvshare + "=" + kvshare}, nil
}

// Pytest runs the suite (files, or all of it) under Interpreter with env
// added; pytest's exit 5, no test collected, is a failure.
func Pytest(root string, env, files []string, w io.Writer) error {
	args := append([]string{Interpreter, "-m", "pytest", "-q", "-p", "no:cacheprovider"}, files...)
	fmt.Fprintf(w, "python: %s (in clients/python)\n", strings.Join(args, " "))
	err := run(filepath.Join(root, "clients", "python"), env, w, args[0], args[1:]...)
	return PytestVerdict(err)
}

// PytestVerdict says what pytest's exit means: nil for 0, an error for
// anything else, naming exit 5 (no tests ran) as such.
func PytestVerdict(err error) error {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit) && exit.ExitCode() == 5:
		return errors.New("python: pytest collected no tests (exit 5): the suite did not run")
	}
	return fmt.Errorf("python: pytest: %w", err)
}

// Install copies clients/python into dir (without build outputs) and
// runs the README's offline install there, then imports the package
// from the venv, outside the source tree: it must come from the venv.
func Install(root, dir string, w io.Writer) error {
	src := filepath.Join(dir, "clients", "python")
	if err := CopySource(filepath.Join(root, "clients", "python"), src); err != nil {
		return fmt.Errorf("python: install: %w", err)
	}
	fmt.Fprintf(w, "python: %s && %s\n", strings.Join(VenvCommand, " "), strings.Join(InstallCommand, " "))
	if err := run(dir, nil, w, VenvCommand[0], VenvCommand[1:]...); err != nil {
		return fmt.Errorf("python: install: %s: %w", strings.Join(VenvCommand, " "), err)
	}
	if err := run(dir, nil, w, filepath.Join(dir, InstallCommand[0]), InstallCommand[1:]...); err != nil {
		return fmt.Errorf("python: install: %s: %w", strings.Join(InstallCommand, " "), err)
	}
	out, err := exec.Command(filepath.Join(dir, "V", "bin", "python"), "-c", "import kvshare_node; print(kvshare_node.__file__)").Output()
	if err != nil {
		return fmt.Errorf("python: install: importing kvshare_node from the venv: %w", err)
	}
	got := strings.TrimSpace(string(out))
	if !strings.HasPrefix(got, filepath.Join(dir, "V")+string(filepath.Separator)) {
		return fmt.Errorf("python: install: kvshare_node imported from %s, not from the venv", got)
	}
	fmt.Fprintf(w, "python: installed offline; kvshare_node imports from %s\n", got)
	return nil
}

// CopySource copies the package's source tree from src to dst, leaving
// out what building or running it leaves behind.
func CopySource(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() && (d.Name() == "__pycache__" || d.Name() == "build" || strings.HasSuffix(d.Name(), ".egg-info")) {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// run runs name with args in dir, env added to this process's, its
// output to w. Python writes no bytecode into the checkout.
func run(dir string, env []string, w io.Writer, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, w, w
	cmd.Env = append(append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1"), env...)
	return cmd.Run()
}

// OverPool runs PoolTests with their nodes over a loopback pool started
// from the Mooncake folder dir (tools/internal/withpool starts it and
// names its store file in EnvNodeStore).
func OverPool(root, dir string, w io.Writer) error {
	tmp, err := os.MkdirTemp("", "kvshare-python-pool-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	env, err := kvshareBinary(root, tmp, w) // PoolTests need no node test binary
	if err != nil {
		return err
	}
	withpool := filepath.Join(tmp, "withpool")
	if err := run(filepath.Join(root, "tools"), nil, w, "go", "build", "-o", withpool, "./internal/withpool"); err != nil {
		return fmt.Errorf("python: building withpool: %w", err)
	}
	args := append([]string{"--mooncake-dir", dir, "--", Interpreter, "-m", "pytest", "-q", "-p", "no:cacheprovider"}, PoolTests...)
	fmt.Fprintf(w, "python: the client's tests over a loopback pool: withpool %s\n", strings.Join(args, " "))
	return PytestVerdict(run(filepath.Join(root, "clients", "python"), env, w, withpool, args...))
}
