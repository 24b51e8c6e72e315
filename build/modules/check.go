package modules

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// CheckWork checks that the go.work at root uses exactly the list's
// module folders, and each once; any difference is named.
func (l List) CheckWork(root string) error {
	work, err := readWork(root)
	if err != nil {
		return err
	}
	used := map[string]bool{}
	var errs []error
	for _, u := range work.Use {
		dir := path.Clean(filepath.ToSlash(u.Path))
		if used[dir] {
			errs = append(errs, fmt.Errorf("go.work uses %s twice", dir))
		}
		used[dir] = true
		if !slices.Contains(l.Dirs(), dir) {
			errs = append(errs, fmt.Errorf("go.work uses %s, which build/modules does not list", dir))
		}
	}
	for _, dir := range l.Dirs() {
		if !used[dir] {
			errs = append(errs, fmt.Errorf("go.work does not use %s, which build/modules lists", dir))
		}
	}
	return wrap(errs)
}

// CheckTree checks that every go.mod under root belongs to a module or a
// consumer of the list, that each listed folder has one,
// and that each module's go.mod declares the path its folder gives.
// Folders named testdata, vendor or starting with a dot are not looked
// into.
func (l List) CheckTree(root string) error {
	found := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (d.Name() == "testdata" || d.Name() == "vendor" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.Name() == "go.mod" && !d.IsDir() {
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			found[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("modules: %w", err)
	}
	known := l.GoModDirs()
	var errs []error
	for dir := range found {
		if !slices.Contains(known, dir) {
			errs = append(errs, fmt.Errorf("%s/go.mod is neither a module nor a consumer in build/modules", dir))
		}
	}
	for _, dir := range known {
		if !found[dir] {
			errs = append(errs, fmt.Errorf("build/modules lists %s, which has no go.mod", dir))
		}
	}
	for _, m := range l.Modules {
		if !found[m.Dir] {
			continue
		}
		f, err := ReadGoMod(root, m.Dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if f.Module == nil || f.Module.Mod.Path != m.Path() {
			errs = append(errs, fmt.Errorf("%s/go.mod does not declare module %s", m.Dir, m.Path()))
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return wrap(errs)
}

// readWork parses the go.work at root.
func readWork(root string) (*modfile.WorkFile, error) {
	name := filepath.Join(root, "go.work")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("modules: %w", err)
	}
	work, err := modfile.ParseWork(name, data, nil)
	if err != nil {
		return nil, fmt.Errorf("modules: %w", err)
	}
	return work, nil
}

// ReadGoMod parses the go.mod in folder dir under root.
func ReadGoMod(root, dir string) (*modfile.File, error) {
	name := filepath.Join(root, filepath.FromSlash(dir), "go.mod")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("modules: %w", err)
	}
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		return nil, fmt.Errorf("modules: %w", err)
	}
	return f, nil
}

func wrap(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("modules: %w", errors.Join(errs...))
}
