package python

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// exitWith runs a shell that exits with code, for a real *exec.ExitError.
func exitWith(t *testing.T, code string) error {
	t.Helper()
	return exec.Command("/bin/sh", "-c", "exit "+code).Run()
}

func TestPytestVerdict(t *testing.T) {
	require.NoError(t, PytestVerdict(nil))
	err := PytestVerdict(exitWith(t, "5"))
	require.ErrorContains(t, err, "collected no tests (exit 5)", "no tests is a failure, said as such")
	err = PytestVerdict(exitWith(t, "1"))
	require.ErrorContains(t, err, "pytest: exit status 1")
	require.NotContains(t, err.Error(), "no tests")
}

func TestTheReadmeGivesTheInstallCommandTheStepChecks(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "clients", "python", "README.md"))
	require.NoError(t, err)
	venv := strings.Replace(strings.Join(VenvCommand, " "), Interpreter, "/usr/bin/python3", 1)
	require.Contains(t, string(readme), venv+" && "+strings.Join(InstallCommand, " "))
	root, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	require.Contains(t, string(root), strings.Join(InstallCommand, " "), "the README's section gives the same command")
}

func TestThePoolTestsExist(t *testing.T) {
	for _, f := range PoolTests {
		_, err := os.Stat(filepath.Join("..", "..", "clients", "python", f))
		require.NoError(t, err, "a pool test file the tier runs")
	}
}

func TestCopySourceLeavesBuildOutputsBehind(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	for _, f := range []string{"pyproject.toml", "pkg/__init__.py", "pkg/__pycache__/x.pyc", "build/lib/x.py", "pkg.egg-info/PKG-INFO"} {
		require.NoError(t, os.MkdirAll(filepath.Join(src, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(src, f), []byte(f), 0o644))
	}
	require.NoError(t, CopySource(src, filepath.Join(dst, "out")))
	var got []string
	require.NoError(t, filepath.Walk(filepath.Join(dst, "out"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(filepath.Join(dst, "out"), p)
			got = append(got, rel)
		}
		return err
	}))
	require.ElementsMatch(t, []string{"pyproject.toml", filepath.Join("pkg", "__init__.py")}, got)
	b, err := os.ReadFile(filepath.Join(dst, "out", "pyproject.toml"))
	require.NoError(t, err)
	require.True(t, bytes.Equal([]byte("pyproject.toml"), b))
}
