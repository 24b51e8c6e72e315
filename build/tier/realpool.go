package tier

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kvshare/kvshare/build/modules"
	"github.com/kvshare/kvshare/build/python"
)

// The variables [Realpool] reads.
const (
	// EnvMooncakeDir names a Mooncake folder (bin/mooncake_master,
	// bin/mooncake_client, lib/libmooncake_store.so) by its absolute
	// path; unset, the tier is off.
	EnvMooncakeDir = "KVSHARE_MOONCAKE_DIR"
	// EnvRealpoolTimeout is each binary's -test.timeout (default 20m).
	EnvRealpoolTimeout = "KVSHARE_REALPOOL_TIMEOUT"
)

// RealpoolPackages are the real-pool tier's packages: every package of
// mooncakedrv with tests, and those of tools, gpuroundtrip, node and events.
var RealpoolPackages = [][2]string{{"mooncakedrv", "./..."}, {"tools", "./..."}, {"gpuroundtrip", "./..."}, {"node", "./..."}, {"events", "./..."}}

// Realpool runs the real-pool tier from the repository at root: off (one
// line, success) when KVSHARE_MOONCAKE_DIR is unset (getenv); else the
// folder is checked (its library's SHA-256 and mooncake_master
// --version printed; a relative path, a missing file or a missing
// runtime library fails it), every test binary runs, then a short soak
// over a loopback pool, then the Python client's tests with their nodes
// over a pool of their own.
func Realpool(root string, list modules.List, getenv func(string) string, w io.Writer) error {
	dir := getenv(EnvMooncakeDir)
	if dir == "" {
		fmt.Fprintf(w, "realpool: off (%s is not set; set it to the absolute path of a Mooncake folder to run the real-pool tier)\n", EnvMooncakeDir)
		return nil
	}
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("realpool: %s=%q is not an absolute path", EnvMooncakeDir, dir)
	}
	timeout := getenv(EnvRealpoolTimeout)
	if timeout == "" {
		var err error
		if timeout, err = defaultTimeout(); err != nil {
			return fmt.Errorf("%s: %w", "realpool", err)
		}
	}
	check := exec.Command("go", "run", "./pool/internal/tiercheck")
	check.Dir, check.Stdout, check.Stderr = filepath.Join(root, "mooncakedrv"), w, os.Stderr
	if err := check.Run(); err != nil {
		return fmt.Errorf("realpool: %s=%s cannot be used (see above): %w", EnvMooncakeDir, dir, err)
	}
	tierErr := storeTier{name: "realpool", off: "real-pool tier off", timeout: timeout, packages: RealpoolPackages,
		soaks: []storeSoak{
			{flags: []string{"--mooncake-dir", dir}, store: "a loopback pool"},
			// A provider killed and started again every 20 s: two kills in
			// the minute, their unprovable memory kept and counted.
			{flags: []string{"--mooncake-dir", dir, "--providers", "3", "--replicas", "2", "--kill-every", "20s"},
				store: "a loopback pool of three providers, replicas 2, one killed and restarted every 20 s"},
			// The same, the unprovable memory won back by reclaims.
			{flags: []string{"--mooncake-dir", dir, "--providers", "3", "--replicas", "2", "--kill-every", "20s", "--reclaim"},
				store: "a loopback pool of three providers, replicas 2, one killed every 20 s, its unprovable memory reclaimed"},
		}}.run(root, list, w)
	if err := python.OverPool(root, dir, w); err != nil {
		return errors.Join(tierErr, fmt.Errorf("realpool: %w", err))
	}
	return tierErr
}

// toolchainFirst is this environment with the Go toolchain first on
// PATH (tests build small helper programs) and cgo on.
func toolchainFirst() ([]string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOROOT: %w", err)
	}
	goroot := strings.TrimSpace(string(out))
	return append(os.Environ(), "PATH="+filepath.Join(goroot, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"), "CGO_ENABLED=1"), nil
}
