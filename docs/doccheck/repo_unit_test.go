package doccheck

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tree writes files (slash path → content) under a new folder.
func tree(t *testing.T, files map[string]string) string {
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return root
}

func TestFilesAndRoot(t *testing.T) {
	root := tree(t, map[string]string{
		"go.work": "", "build/modules/list.go": "", "README.md": "", "docs/design.md": "", "a/README.md": "",
		".git/x.md": "", "a/testdata/x.md": "", "vendor/x.md": "", "clients/python/build/x.md": "", "clients/python/README.md": "",
	})
	got, err := files(root, ".md")
	require.NoError(t, err)
	assert.Equal(t, []string{"README.md", "a/README.md", "clients/python/README.md", "docs/design.md"}, got)

	found, err := findRoot(filepath.Join(root, "a", "testdata"))
	require.NoError(t, err)
	assert.Equal(t, root, found)
	_, err = findRoot(t.TempDir())
	assert.ErrorContains(t, err, "go.work and build/modules")

	for _, tc := range []struct {
		from, name string
		linked     bool
		want       string
	}{
		{"a/README.md", "../docs/design.md", true, "docs/design.md"},
		{"a/README.md", "docs/design.md", true, ""},
		{"a/README.md", "docs/design.md", false, "docs/design.md"},
		{"a/x.go", "README.md", false, "a/README.md"},
		{"docs/design.md", "README", false, "README.md"},
		{"a/README.md", "README", false, "a/README.md"},
		{"README.md", "../outside.md", true, ""},
		{"README.md", "docs", true, "docs"},
		{"README.md", "missing.md", false, ""},
	} {
		assert.Equal(t, tc.want, resolve(root, tc.from, tc.name, tc.linked), "%s names %s", tc.from, tc.name)
	}
}

func TestZeroDefaults(t *testing.T) {
	dir := tree(t, map[string]string{
		"o.go": `package p

import "time"

const base = 16 << 10

type Options struct{ A, B, C, D int64; E time.Duration }

func (o Options) withDefaults() Options {
	if o.A == 0 {
		o.A = 512 << 20
	}
	if o.B == 0 {
		o.B = base * 2
	}
	if o.E == 0 {
		o.E = 30 * time.Second
	}
	if o.C != 0 {
		o.C = 9
	}
	if o.D == 0 {
		o.D = 1
		o.C = 2
	}
	return o
}
`,
		"o_test.go": "package p\n\nfunc (o Options) other() {}\n",
	})
	got, err := zeroDefaults(dir, "withDefaults")
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"A": 512 << 20, "B": 32 << 10, "E": int64(30 * time.Second)}, got,
		"only a lone assignment to the field tested for zero is a default")

	_, err = zeroDefaults(dir, "missing")
	assert.ErrorContains(t, err, "no function missing")

	bad := tree(t, map[string]string{"o.go": "package p\n\nfunc (o O) withDefaults() {\n\tif o.A == 0 {\n\t\to.A = f()\n\t}\n}\n"})
	_, err = zeroDefaults(bad, "withDefaults")
	assert.ErrorContains(t, err, "withDefaults's default for A")
}
