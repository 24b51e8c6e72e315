package doccheck

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// repo is the repository the checks read, each Markdown file scanned
// once.
type repo struct {
	root string
	docs map[string]markdown
}

func openRepo(t *testing.T) *repo {
	t.Helper()
	root, err := findRoot(".")
	require.NoError(t, err)
	return &repo{root: root, docs: map[string]markdown{}}
}

// files lists the repository's files ending in ext (see [files]).
func (r *repo) files(t *testing.T, ext string) []string {
	t.Helper()
	out, err := files(r.root, ext)
	require.NoError(t, err)
	require.NotEmpty(t, out, "no %s file under %s", ext, r.root)
	return out
}

// read is a file's bytes, by slash path from the root.
func (r *repo) read(t *testing.T, name string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(name)))
	require.NoError(t, err)
	return src
}

// doc is a Markdown file, scanned.
func (r *repo) doc(t *testing.T, name string) markdown {
	t.Helper()
	md, ok := r.docs[name]
	if !ok {
		md = scanMarkdown(string(r.read(t, name)))
		r.docs[name] = md
	}
	return md
}
