package pool

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// fakeBuild is the fake Mooncake built once for the package's tests: a
// folder with bin/mooncake_master and bin/mooncake_client (both the
// testdata/fakemooncake program) and a lib/libmooncake_store.so that ldd
// calls "not a dynamic executable".
var fakeBuild string

func TestMain(m *testing.M) {
	if os.Getenv(nodeEnv) == "1" {
		os.Exit(runNode()) // a client node of TestAClientNodeIsCutOffAndHealed
	}
	if dir := os.Getenv(orphanEnv); dir != "" {
		fakeBuild = dir
		os.Exit(m.Run()) // the child of TestProcessesDieWithTheirTestBinary
	}
	dir, err := buildFake()
	if err != nil {
		fmt.Fprintln(os.Stderr, "building the fake Mooncake:", err)
		os.Exit(1)
	}
	fakeBuild = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func buildFake() (string, error) {
	src, err := filepath.Abs("testdata/fakemooncake/main.go")
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "kvshare-fakemooncake-")
	if err != nil {
		return "", err
	}
	for _, sub := range []string{"bin", "lib"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			return "", err
		}
	}
	// Outside any module, static, whatever flags the test run carries:
	// the fake needs the standard library only, so this works offline.
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, MasterBinary), src)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	if err := os.Link(filepath.Join(dir, MasterBinary), filepath.Join(dir, ProviderBinary)); err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, Library), []byte("not a library\n"), 0o644)
}
