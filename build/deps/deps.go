// Package deps checks kvshare's dependency rules: every module's
// packages (tests aside) import only what build/modules allows it, so
// the module graph stays the one docs/modules.md draws and a
// consumer of contract and memdrv pulls in no purego.
package deps

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kvshare/kvshare/build/modules"
)

// Lister lists the non-standard packages that the packages of the module
// in folder dir (under the repository root) import, directly or not,
// its own included.
type Lister func(root, dir, tags string) ([]string, error)

// GoList is the Lister that asks `go list -deps` with GOWORK=off, as a
// team building the module alone would.
func GoList(root, dir, tags string) ([]string, error) {
	cmd := exec.Command("go", "list", "-deps", "-tags="+tags, "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./...")
	cmd.Dir = filepath.Join(root, filepath.FromSlash(dir))
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: go list: %w: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	return strings.Fields(string(out)), nil
}

// Check applies the rules to every module of list and names
// every import that breaks them.
func Check(root string, mods modules.List, list Lister) error {
	var bad []string
	for _, m := range mods.Modules {
		if slices.Contains(m.Imports, "*") {
			continue
		}
		pkgs, err := list(root, m.Dir, m.Tags)
		if err != nil {
			return err
		}
		for _, pkg := range pkgs {
			if !Allowed(m, pkg) {
				bad = append(bad, fmt.Sprintf("%s imports %s", m.Dir, pkg))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("deps: dependency rules broken (build/modules lists what each module may import):\n  %s", strings.Join(bad, "\n  "))
	}
	return nil
}

// Allowed reports whether a package of module m may import pkg: its own
// packages, and the modules and paths m.Imports names ("=storeconfig":
// that sibling's root package alone, not its subpackages).
func Allowed(m modules.Module, pkg string) bool {
	if within(pkg, m.Path()) {
		return true
	}
	for _, a := range m.Imports {
		if a == "*" {
			return true
		}
		exact := strings.HasPrefix(a, "=")
		p := strings.TrimPrefix(a, "=")
		if !strings.Contains(p, ".") {
			p = modules.Prefix + "/" + p
		}
		if pkg == p || !exact && within(pkg, p) {
			return true
		}
	}
	return false
}

func within(pkg, path string) bool { return pkg == path || strings.HasPrefix(pkg, path+"/") }
