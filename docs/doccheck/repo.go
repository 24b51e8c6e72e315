package doccheck

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// skipped are the folders the checks never read: generated, vendored
// or fixture files, not the project's documentation.
var skipped = map[string]bool{"testdata": true, "vendor": true, "node_modules": true, "__pycache__": true, "venv": true}

// skippedPaths are folders of the repository, by slash path from its
// root, that the checks never read: the Python client's build output.
var skippedPaths = map[string]bool{"clients/python/build": true, "clients/python/dist": true}

// findRoot is the repository's root: the nearest folder at or above
// dir holding go.work and build/modules.
func findRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if isFile(filepath.Join(dir, "go.work")) && isDir(filepath.Join(dir, "build", "modules")) {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("doccheck: no folder above this one holds go.work and build/modules: run the checks inside the repository")
		}
		dir = up
	}
}

// files lists the files under root whose names end in ext, as slash
// paths from root, in lexical order; dot folders and the skipped ones
// are left out.
func files(root, ext string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || skipped[d.Name()] || skippedPaths[rel]) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ext) && d.Type().IsRegular() {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("doccheck: walking %s: %w", root, err)
	}
	return out, nil
}

// resolve is the slash path from the root of what a file at from (a
// slash path from the root) names: a link's target is relative to from's
// folder; a written path or name is taken from from's folder when it is
// there, else from the root, the bare word README standing for
// README.md. It returns an empty path when neither exists.
func resolve(root, from, name string, linked bool) string {
	dir := path.Dir(from)
	if linked {
		p := path.Clean(path.Join(dir, name))
		if exists(filepath.Join(root, filepath.FromSlash(p))) && !strings.HasPrefix(p, "../") {
			return p
		}
		return ""
	}
	if name == "README" {
		name = "README.md"
	}
	for _, p := range []string{path.Join(dir, name), path.Clean(name)} {
		if !strings.HasPrefix(p, "../") && exists(filepath.Join(root, filepath.FromSlash(p))) {
			return p
		}
	}
	return ""
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }
func isFile(p string) bool { st, err := os.Stat(p); return err == nil && st.Mode().IsRegular() }
func isDir(p string) bool  { st, err := os.Stat(p); return err == nil && st.IsDir() }
