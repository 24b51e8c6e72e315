package modules

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClaims(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want []Claim
	}{
		{"Package x is x. It imports only contract, keys and rowbatch.\n", []Claim{{"imports only contract, keys and rowbatch", []string{"contract", "keys", "rowbatch"}}}},
		{"It imports only contract and\ngolang.org/x/sys/unix; that package has calls, and more.", []Claim{{"imports only contract and golang.org/x/sys/unix", []string{"contract", "golang.org/x/sys/unix"}}}},
		{"Package x holds y; it imports only the standard library.", []Claim{{"imports only the standard library", []string{StandardLibrary}}}},
		{"It imports only a, b, and c: then more", []Claim{{"imports only a, b, and c", []string{"a", "b", "c"}}}},
		{"It imports only keys", []Claim{{"imports only keys", []string{"keys"}}}},
		{"Package x says nothing of imports. Only a program imports it, so only y links it.", nil},
	} {
		got, errs := Claims(tc.doc)
		assert.Empty(t, errs, tc.doc)
		assert.Equal(t, tc.want, got, tc.doc)
	}
}

func TestClaimsInAnotherFormAreRefused(t *testing.T) {
	for doc, want := range map[string]string{
		"It imports the standard library only, and reads /proc.":                    `"imports the standard library only": write what a package imports as "It imports only A, B and C."`,
		"It imports only contract, so the backend and every driver agree.":          `"so the backend", "every driver agree" name no module`,
		"It imports only the standard library and keeps no state.":                  `"keeps no state" name no module`,
		"This package imports only package keys.":                                   `"package keys" name no module`,
		"It imports only contract, , keys.":                                         `"" name no module`,
		"It imports only contract. It imports rowbatch only. It imports only keys.": `"imports rowbatch only"`,
	} {
		claims, errs := Claims(doc)
		require.NotEmpty(t, errs, doc)
		assert.ErrorContains(t, errors.Join(errs...), want, doc)
		for _, c := range claims {
			assert.NotContains(t, c.Text, "so the backend", "a claim with a bad item is not checked")
		}
	}
}

func FuzzClaims(f *testing.F) {
	for _, seed := range []string{
		"It imports only contract, keys and rowbatch.", "it imports only the standard library;", "imports only",
		"imports only a and b and c", "imports x only", "imports only golang.org/x/sys/unix.\n", "imports only , and .",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		claims, _ := Claims(doc)
		for _, c := range claims {
			require.True(t, strings.HasPrefix(c.Text, "imports only"), c.Text)
			require.NotEmpty(t, c.Items)
			for _, item := range c.Items {
				require.True(t, item == StandardLibrary || item != "" && !strings.ContainsAny(item, " ,"), "item %q", item)
			}
		}
	})
}

func TestCheckClaims(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, doc string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(p, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(p, "doc.go"), []byte(doc+"package x\n"), 0o644))
	}
	g, err := decodeGraph(strings.NewReader(stream))
	require.NoError(t, err)
	for path, p := range g {
		if p.Own {
			p.Dir = filepath.Join(dir, strings.TrimPrefix(path, Prefix+"/"))
			g[path] = p
		}
	}
	list := List{Modules: []Module{{Dir: "m"}, {Dir: "s"}}}
	graphs := map[string]Graph{"m": g, "s": {}}

	write("m", "// Package m is m. It imports only s and golang.org/x/sys.\n")
	write("m/inner", "// Package inner. It imports only golang.org/x/sys/unix and s; so it does.\n")
	assert.NoError(t, list.CheckClaims(graphs))

	write("m", "// Package m is m. It imports only s.\n")
	write("m/inner", "// Package inner. It imports only s, keys and golang.org/x/text.\n")
	err = list.CheckClaims(graphs)
	require.Error(t, err)
	assert.ErrorContains(t, err, `m/doc.go: "imports only s", but package github.com/kvshare/kvshare/m pulls in s and golang.org/x/sys: write "imports only s and golang.org/x/sys"`)
	assert.ErrorContains(t, err, `m/inner/doc.go: "imports only s, keys and golang.org/x/text": "keys" is no folder of a module in build/modules`)
	assert.ErrorContains(t, err, `m/inner/doc.go: "imports only s, keys and golang.org/x/text": the package pulls in no module that holds golang.org/x/text`)

	write("m", "// Package m is m. It imports s only.\n")
	require.NoError(t, os.Remove(filepath.Join(dir, "m", "inner", "doc.go")))
	err = list.CheckClaims(graphs)
	assert.ErrorContains(t, err, `m/doc.go: "imports s only": write`)
	assert.NotContains(t, err.Error(), "inner", "a package without doc.go claims nothing")

	write("m", "// Package m is m.\npackage")
	assert.ErrorContains(t, list.CheckClaims(graphs), "doc.go")
	assert.ErrorContains(t, list.CheckClaims(nil), "no graph of m")
}
