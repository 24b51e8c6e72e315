package diskdrv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// Path names the file a reader without the index would look for:
// present after a put, gone after Remove, which gives the object's
// room back and answers false for a key with no object.
func TestPathAndRemove(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	data := pattern("k", 5000)
	path := s.Path("k")
	_, err := os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Equal(t, contract.Ready, s.Seed("k", data))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, onDisk(int64(len(data))), st.Size())
	assert.NotEqual(t, s.Path("k"), s.Path("other"))

	removed, err := s.Remove("k")
	require.NoError(t, err)
	assert.True(t, removed)
	_, err = os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist)
	used, n := s.Used()
	assert.Zero(t, used)
	assert.Zero(t, n)
	_, ok := s.Object("k")
	assert.False(t, ok)

	removed, err = s.Remove("k")
	require.NoError(t, err)
	assert.False(t, removed, "no object left to remove")
}

// DropCache takes a file or a directory (every file under it) and
// leaves the bytes as they were; a path that is not there is an error.
func TestDropCache(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sub", "f")
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
	require.NoError(t, os.WriteFile(file, []byte("bytes"), 0o644))
	require.NoError(t, DropCache(dir))
	require.NoError(t, DropCache(file))
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "bytes", string(got))
	require.ErrorIs(t, DropCache(filepath.Join(dir, "nosuch")), os.ErrNotExist)
}
