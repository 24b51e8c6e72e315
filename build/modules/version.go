package modules

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// CheckVersion refuses a version a release cannot carry: it must be
// canonical semver with a leading v (v0.3.0, v1.2.3-rc.1), without build
// metadata, and major version 0 or 1 (a v2 would change every module
// path).
func CheckVersion(version string) error {
	switch {
	case !semver.IsValid(version):
		return fmt.Errorf("modules: version %q is not semver (want the form v0.3.0)", version)
	case semver.Canonical(version) != version:
		return fmt.Errorf("modules: version %q is not canonical semver (want %s, no build metadata)", version, semver.Canonical(version))
	case semver.Major(version) != "v0" && semver.Major(version) != "v1":
		return fmt.Errorf("modules: version %q has major version %s: from v2 on every module path would need a /%s suffix", version, semver.Major(version), semver.Major(version))
	}
	return nil
}

// Required is the version the repository's go.mod files require kvshare
// modules at: the highest sibling requirement of any module or consumer
// (after a module was added since the last release, some already name
// the next release).
func (l List) Required(root string) (string, error) {
	best := ""
	for _, dir := range l.GoModDirs() {
		f, err := ReadGoMod(root, dir)
		if err != nil {
			return "", err
		}
		for _, r := range f.Require {
			if Sibling(r.Mod.Path) && (best == "" || semver.Compare(r.Mod.Version, best) > 0) {
				best = r.Mod.Version
			}
		}
	}
	if best == "" {
		return "", errors.New("modules: no go.mod requires a kvshare module, so there is no version to publish")
	}
	if err := CheckVersion(best); err != nil {
		return "", err
	}
	return best, nil
}

// CheckRequirements checks how the go.mod files name their siblings:
// every kvshare requirement at a release version (canonical semver, never
// v0.0.0 or a pseudo-version); every module carries a relative replace
// for each sibling it requires, so it builds alone (GOWORK=off) inside
// the repository; a consumer carries no replace at all, so it builds as
// a team's module would.
func (l List) CheckRequirements(root string) error {
	var errs []error
	check := func(dir string, consumer bool) {
		f, err := ReadGoMod(root, dir)
		if err != nil {
			errs = append(errs, err)
			return
		}
		replaced := map[string]string{}
		for _, r := range f.Replace {
			replaced[r.Old.Path] = r.New.Path
			if consumer {
				errs = append(errs, fmt.Errorf("%s/go.mod replaces %s: a consumer takes kvshare by version only", dir, r.Old.Path))
			}
		}
		for _, r := range f.Require {
			if !Sibling(r.Mod.Path) {
				continue
			}
			v := r.Mod.Version
			if CheckVersion(v) != nil || v == "v0.0.0" || module.IsPseudoVersion(v) {
				errs = append(errs, fmt.Errorf("%s/go.mod requires %s at %s, not a release version", dir, r.Mod.Path, v))
			}
			if consumer {
				continue
			}
			want := relative(dir, r.Mod.Path)
			if got, ok := replaced[r.Mod.Path]; !ok {
				errs = append(errs, fmt.Errorf("%s/go.mod requires %s without a replace => %s", dir, r.Mod.Path, want))
			} else if filepath.ToSlash(got) != want {
				errs = append(errs, fmt.Errorf("%s/go.mod replaces %s with %s, want %s", dir, r.Mod.Path, got, want))
			}
		}
	}
	for _, m := range l.Modules {
		check(m.Dir, false)
	}
	for _, c := range l.Consumers {
		check(c.Dir, true)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("modules: %w", errors.Join(errs...))
}

// SetRequirements rewrites a go.mod's kvshare requirements to version
// and reports whether anything changed; a go.mod with nothing to change
// comes back byte for byte.
func SetRequirements(name string, data []byte, version string) ([]byte, bool, error) {
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		return nil, false, fmt.Errorf("modules: %w", err)
	}
	changed := false
	for _, r := range f.Require {
		if Sibling(r.Mod.Path) && r.Mod.Version != version {
			if err := f.AddRequire(r.Mod.Path, version); err != nil {
				return nil, false, fmt.Errorf("modules: %s: %w", name, err)
			}
			changed = true
		}
	}
	if !changed {
		return data, false, nil
	}
	out, err := f.Format()
	if err != nil {
		return nil, false, fmt.Errorf("modules: %s: %w", name, err)
	}
	return out, true, nil
}

// relative is the replace target of sibling for the module in dir: the
// sibling's folder, relative to dir.
func relative(dir, sibling string) string {
	target := "."
	if sibling != Prefix {
		target = strings.TrimPrefix(sibling, Prefix+"/")
	}
	rel, err := filepath.Rel(filepath.FromSlash(dir), filepath.FromSlash(target))
	if err != nil {
		return target
	}
	rel = filepath.ToSlash(rel)
	if !strings.HasPrefix(rel, ".") {
		rel = "./" + rel
	}
	return rel
}
