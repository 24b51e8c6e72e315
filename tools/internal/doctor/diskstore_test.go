package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/diskdrv"
)

// A disk tier's file: its config, key prefix, directory, space and
// direct I/O, in order; a directory that does not exist yet is fine
// when its parent is writable; one held by a running store warns; a
// capacity beyond the file system fails; a bad file skips the rest.
func TestADiskTiersFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kv")
	file := func(capacity int64) string {
		return storeFile(t, fmt.Sprintf("[blob]\nkey_prefix = \"team\"\n[disk]\ndir = %q\ncapacity = %d\n", dir, capacity))
	}
	rep := Run(t.Context(), Options{ConfigPath: file(1 << 20)})
	require.Len(t, rep.Findings, 5)
	for i, c := range []string{CheckConfig, CheckKeyPrefix, CheckDiskDir, CheckDiskSpace, CheckDirectIO} {
		assert.Equal(t, c, rep.Findings[i].Check, "in order")
	}
	assert.False(t, rep.Failed(), "%+v", rep.Findings)
	f, _ := rep.Find(CheckDiskDir)
	assert.Contains(t, f.Detail, "does not exist yet; the store creates it")
	f, _ = rep.Find(CheckDirectIO)
	if diskdrv.DirectIOWorks(filepath.Dir(dir)) == nil {
		assert.Equal(t, OK, f.Verdict)
		assert.Contains(t, f.Detail, "takes O_DIRECT")
	} else {
		assert.Equal(t, Warn, f.Verdict)
	}

	s, err := diskdrv.Open(dir, diskdrv.Options{})
	require.NoError(t, err)
	rep = Run(t.Context(), Options{ConfigPath: file(1 << 20)})
	f, _ = rep.Find(CheckDiskDir)
	assert.Equal(t, Warn, f.Verdict)
	assert.Contains(t, f.Detail, "held by a running store")
	require.NoError(t, s.Close())
	rep = Run(t.Context(), Options{ConfigPath: file(1 << 20)})
	f, _ = rep.Find(CheckDiskDir)
	assert.Equal(t, OK, f.Verdict, f.Detail)

	rep = Run(t.Context(), Options{ConfigPath: file(1 << 55)})
	f, _ = rep.Find(CheckDiskSpace)
	assert.Equal(t, Fail, f.Verdict)
	assert.Contains(t, f.Detail, "more than the whole file system")

	rep = Run(t.Context(), Options{ConfigPath: storeFile(t, "[disk]\ndir = \"kv\"\ncapacity = 0\n")})
	f, _ = rep.Find(CheckConfig)
	assert.Equal(t, Fail, f.Verdict)
	assert.Contains(t, f.Detail, "[disk] dir: must be an absolute path")
	assert.True(t, rep.Failed())

	if os.Geteuid() != 0 {
		ro := t.TempDir()
		require.NoError(t, os.Chmod(ro, 0o555))
		rep = Run(t.Context(), Options{ConfigPath: storeFile(t, fmt.Sprintf("[disk]\ndir = %q\ncapacity = 0\n", ro))})
		f, _ = rep.Find(CheckDiskDir)
		assert.Equal(t, Fail, f.Verdict)
		assert.Contains(t, f.Detail, "this user cannot create files in")
	}
}
