package tier

import (
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/kvshare/kvshare/build/checks"
)

// The variables [Cuda] reads.
const (
	// EnvCuda, set to 1, runs the CUDA tier here.
	EnvCuda = "KVSHARE_CUDA"
	// EnvCudaBuild names a folder to build the tier's test binary and the
	// script that runs it into, for a GPU machine without Go.
	EnvCudaBuild = "KVSHARE_CUDA_BUILD"
)

// cudaScript runs the CUDA tier's test binary on a GPU machine.
//
//go:embed run-cuda.sh
var cudaScript []byte

// Cuda runs the CUDA tier from the repository at root: gpuroundtrip's
// TestCUDA* tests, built with NVML (the nvml tag). Off (one line,
// success) unless KVSHARE_CUDA=1 or KVSHARE_CUDA_BUILD is set; with
// KVSHARE_CUDA_BUILD=<dir> it builds the test binary and run-cuda.sh
// into dir; with KVSHARE_CUDA=1 it runs the tier here, bounded by nine
// minutes, and a machine without a usable GPU fails it, saying why.
func Cuda(root string, getenv func(string) string, w io.Writer) error {
	run, out := getenv(EnvCuda), getenv(EnvCudaBuild)
	switch run {
	case "", "0", "1":
	default:
		return fmt.Errorf("cuda: %s=%q: want 1 (on) or unset", EnvCuda, run)
	}
	if run != "1" && out == "" {
		fmt.Fprintf(w, "cuda: off (%s is not 1; set %s=1 on a machine with an NVIDIA GPU to run the CUDA tier, or %s=<dir> to build its test binary for one)\n", EnvCuda, EnvCuda, EnvCudaBuild)
		return nil
	}
	gpu := filepath.Join(root, "gpuroundtrip")
	goTest := func(args ...string) error {
		cmd := exec.Command("go", append([]string{"test", "-tags=nvml"}, args...)...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = gpu, w, os.Stderr
		cmd.Env = append(append(os.Environ(), "CGO_ENABLED=1"), checks.QuietCgo)
		return cmd.Run()
	}
	if out != "" {
		dir, err := filepath.Abs(out)
		if err != nil {
			return fmt.Errorf("cuda: %s=%q: %w", EnvCudaBuild, out, err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("cuda: %w", err)
		}
		bin := filepath.Join(dir, "gpuroundtrip.test")
		if err := goTest("-c", "-o", bin, "."); err != nil {
			return fmt.Errorf("cuda: building the test binary: %w", err)
		}
		script := filepath.Join(dir, "run-cuda.sh")
		if err := os.WriteFile(script, cudaScript, 0o755); err != nil {
			return fmt.Errorf("cuda: %w", err)
		}
		fmt.Fprintf(w, "cuda: built %s and %s; copy both to the GPU machine and run ./run-cuda.sh there\n", bin, script)
	}
	if run != "1" {
		return nil
	}
	fmt.Fprintln(w, "cuda: running the CUDA tier (gpuroundtrip, TestCUDA*)")
	return goTest("-count=1", "-v", "-timeout=9m", "-run", "^TestCUDA", ".")
}
