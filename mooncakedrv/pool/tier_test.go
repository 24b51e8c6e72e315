package pool

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTierOffWhenUnsetOrEmpty(t *testing.T) {
	t.Setenv(EnvDir, "")
	require.NoError(t, os.Unsetenv(EnvDir))
	dir, on, err := Tier()
	assert.False(t, on)
	assert.Empty(t, dir)
	assert.NoError(t, err)

	t.Setenv(EnvDir, "")
	_, on, err = Tier()
	assert.False(t, on)
	assert.NoError(t, err)
}

func TestTierOnAndUsable(t *testing.T) {
	t.Setenv(EnvDir, fakeBuild)
	dir, on, err := Tier()
	assert.True(t, on)
	assert.Equal(t, fakeBuild, dir)
	assert.NoError(t, err)
}

func TestTierOnButUnusable(t *testing.T) {
	for name, tc := range map[string]struct {
		dir  string
		want error
	}{
		"relative":    {"mooncake", ErrNotAbsolute},
		"dot":         {"./" + filepath.Base(fakeBuild), ErrNotAbsolute},
		"no such dir": {filepath.Join(t.TempDir(), "absent"), ErrLayout},
		"empty dir":   {t.TempDir(), ErrLayout},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(EnvDir, tc.dir)
			_, on, err := Tier()
			assert.True(t, on)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestTierOffLineIsOneLine(t *testing.T) {
	assert.NotContains(t, TierOff, "\n")
	assert.Contains(t, TierOff, "real-pool tier off")
	assert.Contains(t, TierOff, EnvDir)
}
