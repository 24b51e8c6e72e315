package release

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// A tree is where a module's files come from: the committed tree of a
// git work tree (HEAD), or a plain folder.
type tree struct {
	root     string
	git      bool
	describe string
	time     time.Time
	license  []byte
}

// openTree opens the repository at root: its HEAD when root is the top
// of a git work tree (warning about uncommitted changes, which are left
// out), else the folder itself.
func openTree(root string) (*tree, error) {
	t := &tree{root: root}
	if !isWorkTree(root) {
		t.describe = "folder " + root + " (not a git work tree: its files as they are)"
		t.time = time.Now().UTC().Truncate(time.Second)
		t.license, _ = os.ReadFile(filepath.Join(root, "LICENSE"))
		return t, nil
	}
	t.git = true
	rev, err := git(root, "rev-parse", "--short=12", "HEAD")
	if err != nil {
		return nil, err
	}
	when, err := git(root, "log", "-1", "--format=%cI", "HEAD")
	if err != nil {
		return nil, err
	}
	if t.time, err = time.Parse(time.RFC3339, strings.TrimSpace(when)); err != nil {
		return nil, fmt.Errorf("commit time %q: %w", when, err)
	}
	t.time = t.time.UTC()
	t.describe = "commit " + strings.TrimSpace(rev)
	if changes, err := dirty(root, false); err == nil && len(changes) > 0 {
		t.describe += fmt.Sprintf(" (%d uncommitted changes left out)", len(changes))
	}
	if lic, err := git(root, "cat-file", "blob", "HEAD:LICENSE"); err == nil {
		t.license = []byte(lic)
	}
	return t, nil
}

// files lists the files of folder dir ("." for the whole tree), with
// paths relative to dir. Files of nested modules are listed too;
// zip.Create leaves them out.
func (t *tree) files(dir string) ([]file, error) {
	if t.git {
		return t.gitFiles(dir)
	}
	return t.folderFiles(dir)
}

// gitFiles reads dir at HEAD through git archive, as the go command's
// own module zips are made.
func (t *tree) gitFiles(dir string) ([]file, error) {
	args := []string{"-c", "core.autocrlf=input", "-c", "core.eol=lf", "archive", "--format=zip", "HEAD"}
	prefix := ""
	if dir != "." {
		args = append(args, dir)
		prefix = dir + "/"
	}
	out, err := git(t.root, args...)
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(strings.NewReader(out), int64(len(out)))
	if err != nil {
		return nil, fmt.Errorf("reading git archive: %w", err)
	}
	var files []file
	for _, zf := range zr.File {
		if strings.HasSuffix(zf.Name, "/") || !strings.HasPrefix(zf.Name, prefix) {
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		files = append(files, file{name: strings.TrimPrefix(zf.Name, prefix), data: data, mode: zf.Mode()})
	}
	return files, nil
}

// folderFiles reads dir from disk, leaving out .git.
func (t *tree) folderFiles(dir string) ([]file, error) {
	base := filepath.Join(t.root, filepath.FromSlash(dir))
	var files []file
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(base, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, file{name: filepath.ToSlash(rel), data: data, mode: info.Mode()})
		return nil
	})
	return files, err
}

// file is one file of a module zip, held in memory.
type file struct {
	name string
	data []byte
	mode fs.FileMode
}

func (f file) Path() string                 { return f.name }
func (f file) Lstat() (fs.FileInfo, error)  { return fileInfo{f}, nil }
func (f file) Open() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(f.data)), nil }

type fileInfo struct{ f file }

func (i fileInfo) Name() string       { return path.Base(i.f.name) }
func (i fileInfo) Size() int64        { return int64(len(i.f.data)) }
func (i fileInfo) Mode() fs.FileMode  { return i.f.mode.Perm() }
func (i fileInfo) ModTime() time.Time { return time.Time{} }
func (i fileInfo) IsDir() bool        { return false }
func (i fileInfo) Sys() any           { return nil }
