package modules

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "write "+DocFile+" from the code instead of comparing")

// repoGraphs lists the repository's graphs once for every test that
// needs them.
var repoGraphs = sync.OnceValues(func() ([2]map[string]Graph, error) {
	mods, cons, err := Repo.Graphs(filepath.Join("..", ".."))
	return [2]map[string]Graph{mods, cons}, err
})

func graphs(t *testing.T) (modules, consumers map[string]Graph) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: go list over every module")
	}
	g, err := repoGraphs()
	require.NoError(t, err)
	return g[0], g[1]
}

// docs/modules.md is what the code says, byte for byte.
func TestTheModulesDocIsCurrent(t *testing.T) {
	mods, cons := graphs(t)
	modRows, consRows, err := Repo.Rows(mods, cons)
	require.NoError(t, err)
	want, err := Render(modRows, consRows)
	require.NoError(t, err)
	name := filepath.Join("..", "..", filepath.FromSlash(DocFile))
	if *update {
		require.NoError(t, os.WriteFile(name, want, 0o644))
		return
	}
	got, err := os.ReadFile(name)
	require.NoError(t, err, "run `%s` to write it", RegenerateCommand)
	if string(got) != string(want) {
		t.Fatalf("%s disagrees with the code (%s): run `%s` (or `go test ./build/modules -run TestTheModulesDocIsCurrent -update`) and commit it",
			DocFile, firstDifference(string(got), string(want)), RegenerateCommand)
	}
}

// Every entry of the list's Imports is needed: with build/deps, the list
// says exactly what each module pulls in.
func TestTheListNeedsEveryImport(t *testing.T) {
	mods, _ := graphs(t)
	assert.NoError(t, Repo.CheckUsed(mods))
}

// Every "It imports only" sentence of a doc.go is true.
func TestTheImportSentencesHold(t *testing.T) {
	mods, _ := graphs(t)
	assert.NoError(t, Repo.CheckClaims(mods))
}

// firstDifference names the first line where got and want differ.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d is\n\t%s\nwhere the code says\n\t%s\n", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("it has %d lines where the code says %d", len(g), len(w))
}
