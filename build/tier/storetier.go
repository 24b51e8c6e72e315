package tier

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kvshare/kvshare/build/modules"
)

// storeTier is what the tiers over a real store share once their store
// was checked: every test binary of the packages, in a private network
// namespace when the machine allows it, then each of its soaks,
// `kvshare soak -short` over a store of its own, started by the soak's
// flags.
type storeTier struct {
	name, off, timeout string
	packages           [][2]string
	env                []string    // added to the toolchain's environment
	soaks              []storeSoak // run in order, each whatever the one before it did
}

// storeSoak is one short soak of a tier.
type storeSoak struct {
	flags []string // the soak's flags naming the store, e.g. --redis-server BINARY
	store string   // what the soak runs over, for its lines: "a loopback pool"
}

// args is the soak's command line: wrap (the private network's, or
// none), the kvshare binary, soak -short and the soak's flags.
func (s storeSoak) args(wrap []string, kvshare string) []string {
	return append(append(append([]string(nil), wrap...), kvshare, "soak", "-short"), s.flags...)
}

// run runs the tier from the repository at root; list names the
// modules' build tags.
func (s storeTier) run(root string, list modules.List, w io.Writer) error {
	bins, err := os.MkdirTemp("", "kvshare-"+s.name+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bins)
	began := time.Now()
	defer func() { fmt.Fprintf(w, "%s: the tier took %v\n", s.name, time.Since(began).Round(time.Second)) }()
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
	// The short soaks, each over a store of its own, where the tests ran.
	kvshare := filepath.Join(bins, "kvshare")
	build := exec.Command("go", "build", "-o", kvshare, "./cmd/kvshare")
	build.Dir, build.Stdout, build.Stderr = filepath.Join(root, "tools"), w, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("%s: building kvshare: %w", s.name, err)
	}
	for _, sk := range s.soaks {
		if err := s.soak(sk, wrap, kvshare, env, w); err != nil {
			failed = append(failed, err.Error())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%s: failed: %s", s.name, strings.Join(failed, "; "))
	}
	return nil
}

// soak runs one of the tier's soaks, a line before it and one after
// saying how long it took (FAIL and why, when it failed); the error
// names what it ran over.
func (s storeTier) soak(sk storeSoak, wrap []string, kvshare string, env []string, w io.Writer) error {
	args := sk.args(wrap, kvshare)
	fmt.Fprintf(w, "%s: kvshare soak -short over %s\n", s.name, sk.store)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, w, os.Stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start).Round(100 * time.Millisecond)
	if err != nil {
		fmt.Fprintf(w, "%s: FAIL kvshare soak over %s after %v: %v\n", s.name, sk.store, took, err)
		return fmt.Errorf("kvshare soak over %s", sk.store)
	}
	fmt.Fprintf(w, "%s: kvshare soak over %s passed in %v\n", s.name, sk.store, took)
	return nil
}
