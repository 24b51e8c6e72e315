package release

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"

	"github.com/kvshare/kvshare/build/modules"
)

// Dist writes into dir a module proxy in the GOPROXY file layout holding
// every module of list at version, as a release of version
// would publish it: the files of the committed tree (HEAD: untracked
// files and uncommitted changes are left out, and said to be), each
// go.mod's kvshare requirements set to version, the root's LICENSE in
// every module that has none. Nested modules are left out of each zip,
// as the go command does. Outside a git work tree it reads the folder
// instead, and says so. Versions already in dir stay listed.
func Dist(root string, list modules.List, dir, version string, w io.Writer) error {
	if err := modules.CheckVersion(version); err != nil {
		return fmt.Errorf("dist: %w", err)
	}
	src, err := openTree(root)
	if err != nil {
		return fmt.Errorf("dist: %w", err)
	}
	fmt.Fprintf(w, "dist: %s, version %s, into %s\n", src.describe, version, dir)
	for _, m := range list.Modules {
		if err := publish(src, m, version, dir); err != nil {
			return fmt.Errorf("dist: %s: %w", m.Path(), err)
		}
	}
	fmt.Fprintf(w, "dist: %d modules at %s\n", len(list.Modules), version)
	return nil
}

// publish writes one module's .mod, .zip and .info and lists version.
func publish(src *tree, m modules.Module, version, dir string) error {
	files, err := src.files(m.Dir)
	if err != nil {
		return err
	}
	var goMod []byte
	for i, f := range files {
		if f.name != "go.mod" {
			continue
		}
		out, _, err := modules.SetRequirements(m.Dir+"/go.mod", f.data, version)
		if err != nil {
			return err
		}
		files[i].data, goMod = out, out
	}
	if goMod == nil {
		return fmt.Errorf("no go.mod in %s at %s", m.Dir, src.describe)
	}
	if !slices.ContainsFunc(files, func(f file) bool { return f.name == "LICENSE" }) && src.license != nil {
		files = append(files, file{name: "LICENSE", data: src.license, mode: 0o644})
	}
	zipFiles := make([]zip.File, len(files))
	for i := range files {
		zipFiles[i] = files[i]
	}
	mv := module.Version{Path: m.Path(), Version: version}
	var z bytes.Buffer
	if err := zip.Create(&z, mv, zipFiles); err != nil {
		return err
	}
	escaped, err := module.EscapePath(m.Path())
	if err != nil {
		return err
	}
	at := filepath.Join(dir, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, src.time})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{version + ".mod": goMod, version + ".zip": z.Bytes(), version + ".info": info} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			return err
		}
	}
	return addToList(filepath.Join(at, "list"), version)
}

// addToList adds version to a proxy's list file, once.
func addToList(name, version string) error {
	data, err := os.ReadFile(name)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	versions := strings.Fields(string(data))
	if slices.Contains(versions, version) {
		return nil
	}
	versions = append(versions, version)
	return os.WriteFile(name, []byte(strings.Join(versions, "\n")+"\n"), 0o644)
}
