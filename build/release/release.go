package release

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kvshare/kvshare/build/modules"
)

// ErrDirty is wrapped by [Plan]'s refusal of a work tree with changes.
var ErrDirty = errors.New("release: the work tree has changes (commit or stash them first)")

// A ReleasePlan is what a release of Version does, step by step.
type ReleasePlan struct {
	Version string
	// Edits are the go.mod files whose kvshare requirements change.
	Edits []Edit
	// Tidy is the module folders `go mod tidy` runs in, in order.
	Tidy []string
	// Tags are the tags made on the release commit, one per module.
	Tags []string
}

// An Edit is one go.mod's kvshare requirements set to the version.
type Edit struct {
	// File is the go.mod's path relative to the repository root.
	File string
	// From lists each changed requirement as "path old-version".
	From []string
	data []byte
}

// Plan checks that a release of version of the list's modules can be
// made from the repository at root and says what it would do. It refuses a version that is not
// canonical semver, a work tree with changes (untracked files included),
// and a version already tagged for any module; nothing is changed.
func Plan(root string, list modules.List, version string) (*ReleasePlan, error) {
	if err := modules.CheckVersion(version); err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	if !isWorkTree(root) {
		return nil, fmt.Errorf("release: %s is not the top of a git work tree", root)
	}
	changes, err := dirty(root, true)
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	if len(changes) > 0 {
		return nil, fmt.Errorf("%w:\n  %s", ErrDirty, strings.Join(first(changes, 10), "\n  "))
	}
	p := &ReleasePlan{Version: version}
	var tagged []string
	for _, m := range list.Modules {
		tag := m.Tag(version)
		if tagExists(root, tag) {
			tagged = append(tagged, tag)
		}
		p.Tags = append(p.Tags, tag)
		p.Tidy = append(p.Tidy, m.Dir)
	}
	if len(tagged) > 0 {
		return nil, fmt.Errorf("release: %s is released already: tags %s exist", version, strings.Join(tagged, ", "))
	}
	for _, dir := range list.GoModDirs() {
		file := filepath.ToSlash(filepath.Join(dir, "go.mod"))
		e, err := edit(root, file, version)
		if err != nil {
			return nil, err
		}
		if e != nil {
			p.Edits = append(p.Edits, *e)
		}
	}
	return p, nil
}

// edit is the change a release of version makes to one go.mod, or nil.
func edit(root, file, version string) (*Edit, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	out, changed, err := modules.SetRequirements(file, data, version)
	if err != nil || !changed {
		return nil, err
	}
	before, err := modules.ReadGoMod(root, filepath.Dir(file))
	if err != nil {
		return nil, err
	}
	e := &Edit{File: file, data: out}
	for _, r := range before.Require {
		if modules.Sibling(r.Mod.Path) && r.Mod.Version != version {
			e.From = append(e.From, r.Mod.Path+" "+r.Mod.Version)
		}
	}
	return e, nil
}

// Print writes the plan, one step a line.
func (p *ReleasePlan) Print(w io.Writer) {
	fmt.Fprintf(w, "release %s\n", p.Version)
	if len(p.Edits) == 0 {
		fmt.Fprintf(w, "  go.mod: every kvshare requirement is at %s already\n", p.Version)
	}
	for _, e := range p.Edits {
		for _, from := range e.From {
			fmt.Fprintf(w, "  %s: require %s -> %s\n", e.File, from, p.Version)
		}
	}
	for _, dir := range p.Tidy {
		fmt.Fprintf(w, "  go mod tidy in %s\n", dir)
	}
	fmt.Fprintf(w, "  commit \"release %s\" (if anything changed)\n", p.Version)
	for _, t := range p.Tags {
		fmt.Fprintf(w, "  tag %s\n", t)
	}
	fmt.Fprintf(w, "  push (the releaser's step): git push origin %s\n", strings.Join(p.Tags, " "))
}

// Apply carries the plan out in the repository at root: the go.mod
// edits, `go mod tidy` in each module (GOWORK=off), a commit of every
// go.mod and go.sum that changed, then the tags. It prints each step to
// w. A failure stops it where it is and says so; the tree is left as the
// failed step left it, for the releaser to look at.
func (p *ReleasePlan) Apply(root string, w io.Writer) error {
	for _, e := range p.Edits {
		fmt.Fprintf(w, "release: %s\n", e.File)
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(e.File)), e.data, 0o644); err != nil {
			return fmt.Errorf("release: %w", err)
		}
	}
	for _, dir := range p.Tidy {
		fmt.Fprintf(w, "release: go mod tidy in %s\n", dir)
		cmd := exec.Command("go", "mod", "tidy")
		cmd.Dir = filepath.Join(root, filepath.FromSlash(dir))
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("release: go mod tidy in %s: %w\n%s", dir, err, out)
		}
	}
	changes, err := dirty(root, true)
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	var files []string
	for _, c := range changes {
		f := strings.TrimSpace(c[2:])
		if base := filepath.Base(f); base != "go.mod" && base != "go.sum" {
			return fmt.Errorf("release: %s changed, which a release never changes", f)
		}
		files = append(files, f)
	}
	if len(files) > 0 {
		if _, err := git(root, append([]string{"add", "--"}, files...)...); err != nil {
			return fmt.Errorf("release: %w", err)
		}
		if _, err := git(root, "commit", "-q", "-m", "release "+p.Version); err != nil {
			return fmt.Errorf("release: %w", err)
		}
		fmt.Fprintf(w, "release: committed %d files as \"release %s\"\n", len(files), p.Version)
	} else {
		fmt.Fprintf(w, "release: nothing changed; the tags go on HEAD\n")
	}
	for _, t := range p.Tags {
		if _, err := git(root, "tag", "-a", "-m", "kvshare "+t, t); err != nil {
			return fmt.Errorf("release: %w", err)
		}
		fmt.Fprintf(w, "release: tagged %s\n", t)
	}
	fmt.Fprintf(w, "release: %s tagged here only; push with: git push origin %s\n", p.Version, strings.Join(p.Tags, " "))
	return nil
}

func first(lines []string, n int) []string {
	if len(lines) > n {
		return append(lines[:n:n], fmt.Sprintf("… and %d more", len(lines)-n))
	}
	return lines
}
