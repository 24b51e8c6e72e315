package modules

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixture is a small repository: the root, a and b (b requires a), and
// a consumer c.
var fixture = List{
	Modules:   []Module{{Dir: "."}, {Dir: "a"}, {Dir: "sub/b", Imports: []string{"a"}}},
	Consumers: []Consumer{{Dir: "examples/c"}},
}

func fixtureFiles() map[string]string {
	return map[string]string{
		"go.work":             "go 1.26\n\nuse (\n\t.\n\t./a\n\t./sub/b\n)\n",
		"go.mod":              "module github.com/kvshare/kvshare\n\ngo 1.26\n",
		"a/go.mod":            "module github.com/kvshare/kvshare/a\n\ngo 1.26\n",
		"a/a.go":              "package a\n",
		"sub/b/go.mod":        "module github.com/kvshare/kvshare/sub/b\n\ngo 1.26\n\nrequire github.com/kvshare/kvshare/a v0.3.0\n\nreplace github.com/kvshare/kvshare/a => ../../a\n",
		"examples/c/go.mod":   "module example.com/c\n\ngo 1.26\n\nrequire github.com/kvshare/kvshare/sub/b v0.3.0\n",
		"a/testdata/x/go.mod": "module ignored\n",
	}
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	return root
}

func TestPathsAndTags(t *testing.T) {
	assert.Equal(t, "github.com/kvshare/kvshare", Module{Dir: "."}.Path())
	assert.Equal(t, "github.com/kvshare/kvshare/docs/engineguide", Module{Dir: "docs/engineguide"}.Path())
	assert.Equal(t, "v0.3.0", Module{Dir: "."}.Tag("v0.3.0"))
	assert.Equal(t, "docs/engineguide/v0.3.0", Module{Dir: "docs/engineguide"}.Tag("v0.3.0"))
	assert.True(t, Sibling("github.com/kvshare/kvshare"))
	assert.True(t, Sibling("github.com/kvshare/kvshare/binding"))
	assert.False(t, Sibling("github.com/kvshare/kvsharex"))
	assert.False(t, Sibling("github.com/stretchr/testify"))
	m, err := fixture.Find("sub/b")
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, m.Imports)
	_, err = fixture.Find("nope")
	assert.ErrorContains(t, err, `"nope"`)
}

func TestAGoodTreePasses(t *testing.T) {
	root := writeTree(t, fixtureFiles())
	assert.NoError(t, fixture.CheckWork(root))
	assert.NoError(t, fixture.CheckTree(root))
	assert.NoError(t, fixture.CheckRequirements(root))
	v, err := fixture.Required(root)
	require.NoError(t, err)
	assert.Equal(t, "v0.3.0", v)
}

// Every way the tree can disagree with the list is named.
func TestDisagreementsAreNamed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bend  func(map[string]string)
		check func(List, string) error
		want  []string
	}{
		{"go.work misses a module", func(f map[string]string) { f["go.work"] = "go 1.26\n\nuse (\n\t.\n\t./a\n)\n" },
			List.CheckWork, []string{"go.work does not use sub/b"}},
		{"go.work has one more", func(f map[string]string) {
			f["go.work"] = "go 1.26\n\nuse (\n\t.\n\t./a\n\t./sub/b\n\t./extra\n)\n"
		}, List.CheckWork, []string{"go.work uses extra, which build/modules does not list"}},
		{"a go.mod nobody lists", func(f map[string]string) { f["extra/go.mod"] = "module github.com/kvshare/kvshare/extra\n" },
			List.CheckTree, []string{"extra/go.mod is neither a module nor a consumer"}},
		{"a listed folder without go.mod", func(f map[string]string) { delete(f, "a/go.mod") },
			List.CheckTree, []string{"build/modules lists a, which has no go.mod"}},
		{"a module under another path", func(f map[string]string) { f["a/go.mod"] = "module example.com/a\n" },
			List.CheckTree, []string{"a/go.mod does not declare module github.com/kvshare/kvshare/a"}},
		{"a sibling at v0.0.0", func(f map[string]string) {
			f["sub/b/go.mod"] = "module github.com/kvshare/kvshare/sub/b\n\nrequire github.com/kvshare/kvshare/a v0.0.0\n\nreplace github.com/kvshare/kvshare/a => ../../a\n"
		}, List.CheckRequirements, []string{"sub/b/go.mod requires github.com/kvshare/kvshare/a at v0.0.0, not a release version"}},
		{"a sibling at a pseudo-version", func(f map[string]string) {
			f["sub/b/go.mod"] = "module github.com/kvshare/kvshare/sub/b\n\nrequire github.com/kvshare/kvshare/a v0.3.1-0.20261201000000-abcdefabcdef\n\nreplace github.com/kvshare/kvshare/a => ../../a\n"
		}, List.CheckRequirements, []string{"not a release version"}},
		{"a sibling without its replace", func(f map[string]string) {
			f["sub/b/go.mod"] = "module github.com/kvshare/kvshare/sub/b\n\nrequire github.com/kvshare/kvshare/a v0.3.0\n"
		}, List.CheckRequirements, []string{"sub/b/go.mod requires github.com/kvshare/kvshare/a without a replace => ../../a"}},
		{"a replace to the wrong folder", func(f map[string]string) {
			f["sub/b/go.mod"] = "module github.com/kvshare/kvshare/sub/b\n\nrequire github.com/kvshare/kvshare/a v0.3.0\n\nreplace github.com/kvshare/kvshare/a => ../a\n"
		}, List.CheckRequirements, []string{"replaces github.com/kvshare/kvshare/a with ../a, want ../../a"}},
		{"a consumer with a replace", func(f map[string]string) {
			f["examples/c/go.mod"] += "\nreplace github.com/kvshare/kvshare/sub/b => ../../sub/b\n"
		}, List.CheckRequirements, []string{"examples/c/go.mod replaces github.com/kvshare/kvshare/sub/b: a consumer takes kvshare by version only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := fixtureFiles()
			tc.bend(files)
			err := tc.check(fixture, writeTree(t, files))
			require.Error(t, err)
			for _, w := range tc.want {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}

// The highest sibling requirement is the repository's version: a module
// added since the last release already names the next one.
func TestRequiredIsTheHighest(t *testing.T) {
	files := fixtureFiles()
	files["examples/c/go.mod"] = "module example.com/c\n\nrequire (\n\tgithub.com/kvshare/kvshare/sub/b v0.3.0\n\tgithub.com/kvshare/kvshare/a v0.10.0\n)\n"
	v, err := fixture.Required(writeTree(t, files))
	require.NoError(t, err)
	assert.Equal(t, "v0.10.0", v)

	files = fixtureFiles()
	files["sub/b/go.mod"] = "module github.com/kvshare/kvshare/sub/b\n"
	files["examples/c/go.mod"] = "module example.com/c\n"
	_, err = fixture.Required(writeTree(t, files))
	assert.ErrorContains(t, err, "no go.mod requires a kvshare module")
}

func TestCheckVersion(t *testing.T) {
	for _, v := range []string{"v0.3.0", "v1.0.0", "v0.3.1-rc.1"} {
		assert.NoError(t, CheckVersion(v), v)
	}
	for v, want := range map[string]string{
		"0.3.0":        "not semver",
		"v0.3":         "not canonical",
		"v0.3.0+build": "not canonical",
		"v2.0.0":       "major version v2",
		"":             "not semver",
		"latest":       "not semver",
	} {
		assert.ErrorContains(t, CheckVersion(v), want, v)
	}
}

func TestSetRequirements(t *testing.T) {
	in := []byte("module github.com/kvshare/kvshare/sub/b\n\ngo 1.26\n\nrequire (\n\tgithub.com/kvshare/kvshare/a v0.3.0\n\tgithub.com/stretchr/testify v1.12.1\n)\n\nreplace github.com/kvshare/kvshare/a => ../../a\n")
	out, changed, err := SetRequirements("go.mod", in, "v0.4.0")
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Contains(t, string(out), "github.com/kvshare/kvshare/a v0.4.0")
	assert.Contains(t, string(out), "github.com/stretchr/testify v1.12.1")
	assert.Contains(t, string(out), "replace github.com/kvshare/kvshare/a => ../../a")

	same, changed, err := SetRequirements("go.mod", in, "v0.3.0")
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Equal(t, in, same)

	_, _, err = SetRequirements("bad/go.mod", []byte("module\nrequire ("), "v0.3.0")
	assert.ErrorContains(t, err, "bad/go.mod")
}

// The repository itself agrees with the list: a module added without an
// entry, or an entry without its module, fails here.
func TestTheRepositoryAgrees(t *testing.T) {
	root := filepath.Join("..", "..")
	assert.NoError(t, Repo.CheckWork(root))
	assert.NoError(t, Repo.CheckTree(root))
	assert.NoError(t, Repo.CheckRequirements(root))
	_, err := Repo.Required(root)
	assert.NoError(t, err)
}
