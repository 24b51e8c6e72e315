package pool

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const lddSample = `	linux-vdso.so.1 (0x00007ffd5a5f1000)
	libibverbs.so.1 => not found
	libglog.so.1 => not found
	libasio.so => /opt/mooncake/lib/libasio.so (0x00007f1c2a000000)
	libstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x00007f1c29c00000)
	libglog.so.1 => not found
	libkvsharefake.so.9 => not found
	/lib64/ld-linux-x86-64.so.2 (0x00007f1c2a2a0000)
`

func TestParseLDD(t *testing.T) {
	assert.Equal(t, []string{"libibverbs.so.1", "libglog.so.1", "libkvsharefake.so.9"}, parseLDD([]byte(lddSample)))
	assert.Empty(t, parseLDD([]byte("\tnot a dynamic executable\n")))
	assert.Empty(t, parseLDD(nil))
}

func TestMissingLibrariesErrorNamesPackages(t *testing.T) {
	err := error(&MissingLibrariesError{
		Files:     []string{"/m/lib/libmooncake_store.so"},
		Libraries: []string{"libglog.so.1", "libibverbs.so.1", "libkvsharefake.so.9"},
	})
	require.ErrorIs(t, err, ErrMissingLibraries)
	msg := err.Error()
	for _, want := range []string{
		"libglog.so.1 (Debian package libgoogle-glog0v6)",
		"libibverbs.so.1 (Debian package libibverbs1)",
		"libkvsharefake.so.9 (no known Debian package)",
		"/m/lib/libmooncake_store.so",
		"apt-get install -y libgoogle-glog0v6 libibverbs1",
	} {
		assert.Contains(t, msg, want)
	}
	assert.Equal(t, ErrMissingLibraries.Error()+": libglog.so.1 (Debian package libgoogle-glog0v6), libibverbs.so.1 (Debian package libibverbs1), "+
		"libkvsharefake.so.9 (no known Debian package) — needed by /m/lib/libmooncake_store.so; install with: apt-get install -y libgoogle-glog0v6 libibverbs1", msg)

	// Only libraries no Debian package is known for: no install line.
	err = &MissingLibrariesError{Files: []string{"/a.so", "/b"}, Libraries: []string{"libx.so.1"}}
	assert.Equal(t, ErrMissingLibraries.Error()+": libx.so.1 (no known Debian package) — needed by /a.so, /b", err.Error())
}

func TestCheckRefusesARelativePath(t *testing.T) {
	require.ErrorIs(t, Check(context.Background(), "relative/mooncake"), ErrNotAbsolute)
}

func TestCheckNamesTheMissingFile(t *testing.T) {
	dir := copyFake(t)
	require.NoError(t, Check(context.Background(), dir))
	for _, rel := range []string{Library, ProviderBinary, MasterBinary} {
		require.NoError(t, os.Remove(filepath.Join(dir, rel)))
		err := Check(context.Background(), dir)
		require.ErrorIs(t, err, ErrLayout)
		assert.Contains(t, err.Error(), rel)
	}
}

func TestCheckRefusesABinaryThatIsNotExecutable(t *testing.T) {
	dir := copyFake(t)
	require.NoError(t, os.Chmod(filepath.Join(dir, ProviderBinary), 0o644))
	err := Check(context.Background(), dir)
	require.ErrorIs(t, err, ErrLayout)
	assert.Contains(t, err.Error(), "not executable")
}

// A library linked against one that is gone: ldd says "not found", and
// Check names it.
func TestCheckNamesAMissingRuntimeLibrary(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	require.NoError(t, err, "gcc is needed here as for -race")
	dir := copyFake(t)
	work := t.TempDir()
	src := filepath.Join(work, "empty.c")
	require.NoError(t, os.WriteFile(src, []byte("int kvshare_fake(void) { return 0; }\n"), 0o644))
	run := func(args ...string) {
		out, err := exec.Command(gcc, args...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	run("-shared", "-fPIC", "-o", filepath.Join(work, "libkvsharegone.so"), src)
	run("-shared", "-fPIC", "-o", filepath.Join(dir, Library), src, "-L"+work, "-Wl,--no-as-needed", "-lkvsharegone")
	require.NoError(t, os.Remove(filepath.Join(work, "libkvsharegone.so")))

	err = Check(context.Background(), dir)
	var missing *MissingLibrariesError
	require.ErrorAs(t, err, &missing)
	require.ErrorIs(t, err, ErrMissingLibraries)
	assert.Equal(t, []string{"libkvsharegone.so"}, missing.Libraries)
	assert.Equal(t, []string{filepath.Join(dir, Library)}, missing.Files)
	assert.Contains(t, err.Error(), "libkvsharegone.so (no known Debian package)")
}

func TestVersionAndLibrarySHA256(t *testing.T) {
	v, err := Version(context.Background(), fakeBuild)
	require.NoError(t, err)
	assert.Equal(t, "mooncake_master version 0.0.0-fake", v)

	sum, err := LibrarySHA256(fakeBuild)
	require.NoError(t, err)
	// sha256("not a library\n")
	assert.Equal(t, "1e6b62ba51f1b685d844b6b473a7518e5d4630c045f203e3fe3be2ce30b2a174", sum)

	_, err = LibrarySHA256(t.TempDir())
	require.Error(t, err)
}

// copyFake copies the fake Mooncake into a folder of t's own.
func copyFake(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, rel := range []string{MasterBinary, ProviderBinary, Library} {
		data, err := os.ReadFile(filepath.Join(fakeBuild, rel))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, rel), data, 0o755))
	}
	return dir
}
