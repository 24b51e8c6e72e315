package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/build/modules"
)

// fixture is a small repository of three modules (the root, a, and b,
// which imports a) and a consumer c, as a git work tree.
var fixture = modules.List{
	Modules:   []modules.Module{{Dir: "."}, {Dir: "a"}, {Dir: "sub/b"}},
	Consumers: []modules.Consumer{{Dir: "examples/c"}},
}

const (
	aPath = "github.com/kvshare/kvshare/a"
	bPath = "github.com/kvshare/kvshare/sub/b"
)

func fixtureFiles() map[string]string {
	return map[string]string{
		"LICENSE":            "the fixture's license\n",
		"go.work":            "go 1.26\n\nuse (\n\t.\n\t./a\n\t./sub/b\n)\n",
		"go.mod":             "module github.com/kvshare/kvshare\n\ngo 1.26\n",
		"root.go":            "package kvshare\n",
		"a/go.mod":           "module " + aPath + "\n\ngo 1.26\n",
		"a/a.go":             "// Package a says hello.\npackage a\n\n// Hello is a's word.\nconst Hello = \"hello from a\"\n",
		"sub/b/go.mod":       "module " + bPath + "\n\ngo 1.26\n\nrequire " + aPath + " v0.3.0\n\nreplace " + aPath + " => ../../a\n",
		"sub/b/b.go":         "// Package b passes a's word on.\npackage b\n\nimport \"" + aPath + "\"\n\n// Hello is a's word.\nconst Hello = a.Hello\n",
		"examples/c/go.mod":  "module example.com/c\n\ngo 1.26\n\nrequire " + bPath + " v0.3.0\n",
		"examples/c/main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"" + bPath + "\"\n)\n\nfunc main() { fmt.Println(b.Hello) }\n",
	}
}

// gitRepo writes files into a new git work tree and commits them.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	t.Setenv("GIT_AUTHOR_NAME", "kvshare tests")
	t.Setenv("GIT_AUTHOR_EMAIL", "tests@kvshare.invalid")
	t.Setenv("GIT_COMMITTER_NAME", "kvshare tests")
	t.Setenv("GIT_COMMITTER_EMAIL", "tests@kvshare.invalid")
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOTOOLCHAIN", "local")
	root := writeFiles(t, files)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "the fixture"}} {
		run(t, root, "git", args...)
	}
	return root
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		write(t, root, name, body)
	}
	return root
}

func write(t *testing.T, root, name, body string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
}

func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), out)
	return string(out)
}
