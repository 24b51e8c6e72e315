package release

import (
	"archive/zip"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// zipNames lists a module zip's files, without the module@version/
// prefix.
func zipNames(t *testing.T, name string) map[string]string {
	t.Helper()
	zr, err := zip.OpenReader(name)
	require.NoError(t, err)
	defer zr.Close()
	files := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		require.NoError(t, err)
		rc.Close()
		_, rel, _ := strings.Cut(f.Name, "/")
		for strings.Contains(rel, "@") { // the module path has slashes
			_, rel, _ = strings.Cut(rel, "/")
		}
		files[rel] = string(b)
	}
	return files
}

func TestDistWritesAProxyOfTheCommittedTree(t *testing.T) {
	root := gitRepo(t, fixtureFiles())
	write(t, root, "a/untracked.go", "package a\n")
	write(t, root, "a/a.go", "package a\n\nconst Hello = \"changed, not committed\"\n")
	dir := t.TempDir()
	var out strings.Builder
	require.NoError(t, Dist(root, fixture, dir, "v0.3.0", &out))
	assert.Contains(t, out.String(), "(1 uncommitted changes left out)")

	at := filepath.Join(dir, "github.com", "kvshare", "kvshare")
	list, err := os.ReadFile(filepath.Join(at, "a", "@v", "list"))
	require.NoError(t, err)
	assert.Equal(t, "v0.3.0\n", string(list))

	var info struct {
		Version string
		Time    time.Time
	}
	data, err := os.ReadFile(filepath.Join(at, "a", "@v", "v0.3.0.info"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &info))
	assert.Equal(t, "v0.3.0", info.Version)
	assert.WithinDuration(t, time.Now(), info.Time, time.Hour)

	a := zipNames(t, filepath.Join(at, "a", "@v", "v0.3.0.zip"))
	assert.Contains(t, a["a.go"], `"hello from a"`, "the committed file, not the changed one")
	assert.NotContains(t, a, "untracked.go")
	assert.Equal(t, "the fixture's license\n", a["LICENSE"], "a module without a LICENSE gets the root's")

	root0 := zipNames(t, filepath.Join(at, "@v", "v0.3.0.zip"))
	assert.Contains(t, root0, "root.go")
	for name := range root0 {
		assert.False(t, strings.HasPrefix(name, "a/") || strings.HasPrefix(name, "sub/") || strings.HasPrefix(name, "examples/"),
			"the root's zip leaves nested modules out: %s", name)
	}
}

// Published at another version, each go.mod names it; both stay listed.
func TestDistSetsTheVersion(t *testing.T) {
	root := gitRepo(t, fixtureFiles())
	dir := t.TempDir()
	require.NoError(t, Dist(root, fixture, dir, "v0.3.0", &strings.Builder{}))
	require.NoError(t, Dist(root, fixture, dir, "v0.5.0", &strings.Builder{}))
	at := filepath.Join(dir, "github.com", "kvshare", "kvshare", "sub", "b", "@v")
	list, err := os.ReadFile(filepath.Join(at, "list"))
	require.NoError(t, err)
	assert.Equal(t, "v0.3.0\nv0.5.0\n", string(list))
	mod, err := os.ReadFile(filepath.Join(at, "v0.5.0.mod"))
	require.NoError(t, err)
	assert.Contains(t, string(mod), aPath+" v0.5.0")
	assert.Equal(t, string(mod), zipNames(t, filepath.Join(at, "v0.5.0.zip"))["go.mod"], "the .mod is the zip's go.mod")

	assert.ErrorContains(t, Dist(root, fixture, dir, "v0.5", &strings.Builder{}), "not canonical")
}

// The go command takes the proxy as it would a registry: a consumer
// with no replace requires b by version and builds, offline.
func TestTheGoCommandAcceptsTheProxy(t *testing.T) {
	root := gitRepo(t, fixtureFiles())
	dir := t.TempDir()
	require.NoError(t, Dist(root, fixture, dir, "v0.3.0", &strings.Builder{}))
	consumer := writeFiles(t, map[string]string{
		"go.mod":  fixtureFiles()["examples/c/go.mod"],
		"main.go": fixtureFiles()["examples/c/main.go"],
	})
	cache := t.TempDir()
	env := append(os.Environ(), "GOWORK=off", "GOMODCACHE="+cache, "GOFLAGS=-modcacherw -mod=mod",
		"GOPROXY=file://"+filepath.ToSlash(dir), "GOSUMDB=off", "GONOSUMDB=github.com/kvshare/*", "GOTOOLCHAIN=local")
	for _, args := range [][]string{{"mod", "tidy"}, {"mod", "verify"}, {"run", "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = consumer, env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s: %s", strings.Join(args, " "), out)
		if args[0] == "run" {
			assert.Equal(t, "hello from a\n", string(out))
		}
	}
}

// Outside a git work tree, the folder's files are published, and Dist
// says so.
func TestDistOfAFolder(t *testing.T) {
	root := writeFiles(t, fixtureFiles())
	dir := t.TempDir()
	var out strings.Builder
	require.NoError(t, Dist(root, fixture, dir, "v0.3.0", &out))
	assert.Contains(t, out.String(), "not a git work tree")
	a := zipNames(t, filepath.Join(dir, "github.com", "kvshare", "kvshare", "a", "@v", "v0.3.0.zip"))
	assert.Contains(t, a, "a.go")
	assert.Equal(t, "the fixture's license\n", a["LICENSE"])
}
