package redistest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeServer writes an executable shell script named redis-server in a
// fresh folder that prints out and exits with code, and returns its path.
func fakeServer(t *testing.T, out string, code int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "redis-server")
	script := "#!/bin/sh\necho '" + out + "'\nexit " + string(rune('0'+code)) + "\n"
	require.NoError(t, os.WriteFile(path, []byte(script), 0o755))
	return path
}

func TestTierOffWhenUnsetOrEmpty(t *testing.T) {
	t.Setenv(EnvServer, "")
	require.NoError(t, os.Unsetenv(EnvServer))
	binary, on, err := Tier()
	assert.False(t, on)
	assert.Empty(t, binary)
	assert.NoError(t, err)

	t.Setenv(EnvServer, "")
	_, on, err = Tier()
	assert.False(t, on)
	assert.NoError(t, err)
}

func TestTierOnWithUsableBinary(t *testing.T) {
	fake := fakeServer(t, "Redis server v=7.2.4 sha=00000000:0 malloc=libc bits=64 build=1", 0)
	t.Setenv(EnvServer, fake)
	binary, on, err := Tier()
	assert.True(t, on)
	assert.Equal(t, fake, binary)
	assert.NoError(t, err)
}

func TestTierOnButUnusable(t *testing.T) {
	t.Setenv(EnvServer, "redis-server")
	binary, on, err := Tier()
	assert.True(t, on)
	assert.Equal(t, "redis-server", binary)
	require.ErrorIs(t, err, ErrNotAbsolute)
}

func TestCheckAcceptsRealBinary(t *testing.T) {
	binary := Require(t)
	version, err := Check(t.Context(), binary)
	require.NoError(t, err)
	assert.Regexp(t, `^\d+\.\d+\.\d+$`, version)
}

func TestCheckAcceptsVersionSevenAndUp(t *testing.T) {
	for _, want := range []string{"7.0.0", "7.2.4", "8.0.2", "10.1.0"} {
		t.Run(want, func(t *testing.T) {
			version, err := Check(t.Context(), fakeServer(t, "Redis server v="+want+" sha=00000000:0 malloc=libc bits=64", 0))
			require.NoError(t, err)
			assert.Equal(t, want, version)
		})
	}
}

func TestCheckRefuses(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "redis-server-noexec")
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\necho v=7.0.0\n"), 0o644))
	for _, tc := range []struct {
		name   string
		binary string
		want   error
		text   string
	}{
		{"empty", "", ErrNotAbsolute, `""`},
		{"relative name", "redis-server", ErrNotAbsolute, "redis-server"},
		{"relative path", "./bin/redis-server", ErrNotAbsolute, "./bin/redis-server"},
		{"missing file", filepath.Join(dir, "absent"), ErrNoBinary, "does not exist"},
		{"folder", dir, ErrNoBinary, "is a folder"},
		{"not executable", notExec, ErrNotExecutable, "mode -rw-r--r--"},
		{"version 6.2.0", fakeServer(t, "Redis server v=6.2.0 sha=00000000:0 malloc=libc bits=64", 0), ErrVersion, "version 6.2.0"},
		{"no version", fakeServer(t, "hello", 0), ErrVersion, `no "v=X.Y.Z"`},
		{"--version fails", fakeServer(t, "v=7.0.0 but broken", 3), ErrVersion, "exit status 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			version, err := Check(context.Background(), tc.binary)
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.text)
			assert.Empty(t, version)
		})
	}
}

func TestTierOffLineIsOneLine(t *testing.T) {
	assert.NotContains(t, TierOff, "\n")
	assert.True(t, strings.HasPrefix(TierOff, "redis tier off"))
	assert.Contains(t, TierOff, EnvServer)
}
