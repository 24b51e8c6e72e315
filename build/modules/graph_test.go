package modules

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stream is go list's answer for a module m whose two packages import
// a sibling s (whose package imports x/sys) and the standard library.
const stream = `
{"ImportPath": "fmt", "Standard": true, "DepOnly": true}
{"ImportPath": "golang.org/x/sys/unix", "Module": {"Path": "golang.org/x/sys"}, "DepOnly": true, "Imports": ["fmt"]}
{"ImportPath": "github.com/kvshare/kvshare/s", "Module": {"Path": "github.com/kvshare/kvshare/s"}, "DepOnly": true, "Imports": ["golang.org/x/sys/unix", "C"]}
{"ImportPath": "github.com/kvshare/kvshare/m/inner", "Module": {"Path": "github.com/kvshare/kvshare/m"}, "Imports": ["github.com/kvshare/kvshare/s"]}
{"ImportPath": "github.com/kvshare/kvshare/m", "Module": {"Path": "github.com/kvshare/kvshare/m"}, "Doc": "Package m is m.", "Imports": ["fmt", "github.com/kvshare/kvshare/m/inner"]}
`

func TestAGraphFromGoList(t *testing.T) {
	g, err := decodeGraph(strings.NewReader(stream))
	require.NoError(t, err)
	own := g.Own()
	require.Len(t, own, 2)
	assert.Equal(t, "github.com/kvshare/kvshare/m", own[0].ImportPath)
	assert.Equal(t, "Package m is m.", own[0].Doc)
	self, err := g.Self()
	require.NoError(t, err)
	assert.Equal(t, "github.com/kvshare/kvshare/m", self)

	deps, err := g.Deps()
	require.NoError(t, err)
	assert.Equal(t, []string{"github.com/kvshare/kvshare/s"}, deps.Direct, "inner is m's own; fmt is standard")
	assert.Equal(t, []string{"github.com/kvshare/kvshare/s", "golang.org/x/sys"}, deps.All)

	reach, err := g.Reach(self, "github.com/kvshare/kvshare/m/inner")
	require.NoError(t, err)
	assert.Equal(t, []string{"github.com/kvshare/kvshare/s", "golang.org/x/sys/unix"}, reach)
}

func TestABrokenGraphIsRefused(t *testing.T) {
	for _, tc := range []struct{ name, stream, want string }{
		{"not JSON", `{"ImportPath": `, "unexpected EOF"},
		{"no import path", `{"Module": {"Path": "x.org/y"}}`, "without an import path"},
		{"outside any module", `{"ImportPath": "x.org/y"}`, "package x.org/y is in no module"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeGraph(strings.NewReader(tc.stream))
			assert.ErrorContains(t, err, tc.want)
		})
	}

	two, err := decodeGraph(strings.NewReader(`{"ImportPath": "a.org/x", "Module": {"Path": "a.org/x"}}
{"ImportPath": "b.org/y", "Module": {"Path": "b.org/y"}}`))
	require.NoError(t, err)
	_, err = two.Deps()
	assert.ErrorContains(t, err, "two modules, a.org/x and b.org/y")

	none, err := decodeGraph(strings.NewReader(`{"ImportPath": "a.org/x", "Module": {"Path": "a.org/x"}, "DepOnly": true}`))
	require.NoError(t, err)
	_, err = none.Deps()
	assert.ErrorContains(t, err, "no package of its own")

	missing, err := decodeGraph(strings.NewReader(`{"ImportPath": "a.org/x", "Module": {"Path": "a.org/x"}, "Imports": ["b.org/gone"]}`))
	require.NoError(t, err)
	_, err = missing.Deps()
	assert.ErrorContains(t, err, "does not hold package b.org/gone")
}

// The go command lists a module alone and a consumer in a workspace of
// its own.
func TestGraphsOfATree(t *testing.T) {
	files := fixtureFiles()
	files["a/a.go"] = "// Package a is the first.\npackage a\n"
	files["sub/b/b.go"] = "// Package b is the second.\npackage b\n\nimport _ \"github.com/kvshare/kvshare/a\"\n"
	files["examples/c/main.go"] = "// Command c takes b.\npackage main\n\nimport _ \"github.com/kvshare/kvshare/sub/b\"\n\nfunc main() {}\n"
	root := writeTree(t, files)
	list := List{Modules: fixture.Modules[1:], Consumers: fixture.Consumers}

	mods, cons, err := list.Graphs(root)
	require.NoError(t, err)
	modRows, consRows, err := list.Rows(mods, cons)
	require.NoError(t, err)
	a := "github.com/kvshare/kvshare/a"
	assert.Equal(t, []Row{
		{Name: "`a`", About: "Package a is the first."},
		{Name: "`sub/b`", About: "Package b is the second.", Deps: Deps{Direct: []string{a}, All: []string{a}}},
	}, modRows)
	assert.Equal(t, []Row{{Name: "`examples/c`", About: "Command c takes b.",
		Deps: Deps{Direct: []string{"github.com/kvshare/kvshare/sub/b"}, All: []string{a, "github.com/kvshare/kvshare/sub/b"}}}}, consRows)

	files["a/a.go"] = "package a\n"
	root = writeTree(t, files)
	mods, cons, err = list.Graphs(root)
	require.NoError(t, err)
	_, _, err = list.Rows(mods, cons)
	assert.ErrorContains(t, err, "a: package github.com/kvshare/kvshare/a has no package comment")

	_, err = GoList(filepath.Join(root, "nowhere"), "", "GOWORK=off")
	assert.ErrorContains(t, err, "go list in")
}
