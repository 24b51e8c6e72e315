package tier

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kvshare/kvshare/build/modules"
)

// storeTier is what the tiers over a real store share once their store
// was checked: every test binary of the packages, in a private network
// namespace when the machine allows it, then `kvshare soak -short` over
// a store of its own, started by the soak's flag.
type storeTier struct {
	name, off, timeout string
	packages           [][2]string
	env                []string // added to the toolchain's environment
	soakFlag           []string // the soak's flag naming the store, e.g. --redis-server BINARY
	store              string   // what the soak runs over, for its lines: "a loopback pool"
}

// run runs the tier from the repository at root; list names the
// modules' build tags.
func (s storeTier) run(root string, list modules.List, w io.Writer) error {
	bins, err := os.MkdirTemp("", "kvshare-"+s.name+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bins)
	wrap, where := PrivateNetwork()
	fmt.Fprintf(w, "%s: running %s\n", s.name, where)
	env, err := toolchainFirst()
	if err != nil {
		return err
	}
	env = append(env, s.env...)
	t := Tier{Name: s.name, Off: s.off, Packages: s.packages, Timeout: s.timeout, Wrap: wrap, Env: env}
	var failed []string
	if _, err := t.Run(root, list, bins, w); err != nil {
		failed = append(failed, err.Error())
	}
	// The short soak over a store of its own, where the tests ran.
	kvshare := filepath.Join(bins, "kvshare")
	build := exec.Command("go", "build", "-o", kvshare, "./cmd/kvshare")
	build.Dir, build.Stdout, build.Stderr = filepath.Join(root, "tools"), w, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("%s: building kvshare: %w", s.name, err)
	}
	args := append(append(append([]string(nil), wrap...), kvshare, "soak", "-short"), s.soakFlag...)
	fmt.Fprintf(w, "%s: kvshare soak -short over %s\n", s.name, s.store)
	soak := exec.Command(args[0], args[1:]...)
	soak.Env, soak.Stdout, soak.Stderr = env, w, os.Stderr
	if err := soak.Run(); err != nil {
		fmt.Fprintf(w, "%s: FAIL kvshare soak over %s: %v\n", s.name, s.store, err)
		failed = append(failed, "kvshare soak over "+s.store)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%s: failed: %s", s.name, strings.Join(failed, "; "))
	}
	return nil
}
