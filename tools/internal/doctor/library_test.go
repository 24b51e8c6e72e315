package doctor

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// libraryConfig is a parsed config with the given library and pins.
func libraryConfig(t *testing.T, library string, pins ...string) mooncakesdk.StoreConfig {
	t.Helper()
	text := config(library, "127.0.0.1:1", "http://127.0.0.1:2/metadata")
	if len(pins) > 0 {
		text = strings.Replace(text, "[mooncake]\n", "[mooncake]\nsdk_sha256 = [\""+strings.Join(pins, `", "`)+"\"]\n", 1)
	}
	cfg, err := mooncakesdk.LoadStoreConfig(storeFile(t, text))
	require.NoError(t, err)
	return cfg
}

func TestLibraryRefusals(t *testing.T) {
	dir := t.TempDir()
	notALibrary := filepath.Join(dir, "libmooncake_store.so")
	require.NoError(t, os.WriteFile(notALibrary, []byte("not a library\n"), 0o644))
	sum := sha256Hex(t, notALibrary)
	missing := filepath.Join(dir, "nosuch", "libmooncake_store.so")
	otherPin := strings.Repeat("ab", 32)

	for _, c := range []struct {
		name    string
		cfg     mooncakesdk.StoreConfig
		env     map[string]string
		want    []string
		notWant string
	}{
		{name: "missing file", cfg: libraryConfig(t, missing),
			want: []string{missing, "from [mooncake] library", "no such file"}},
		{name: "missing file from the environment", cfg: libraryConfig(t, ""),
			env:  map[string]string{mooncakesdk.EnvLibrary: missing},
			want: []string{missing, "from $KVSHARE_MOONCAKE_LIB"}},
		{name: "hash not pinned", cfg: libraryConfig(t, notALibrary, otherPin),
			want: []string{notALibrary, sum, "sdk_sha256", otherPin, "store.toml"}},
		{name: "not a library", cfg: libraryConfig(t, notALibrary, sum),
			want: []string{"cannot load " + notALibrary}},
		{name: "found on the search path, no function", cfg: libraryConfig(t, "libc.so.6"),
			want: []string{"libc.so.6 (from [mooncake] library", "lacks 19 of the 19 store_c.h functions", "mooncake_store_create", "mooncake_store_unregister_buffer"}},
		{name: "default name not found", cfg: libraryConfig(t, ""),
			want: []string{"libmooncake_store.so (from the loader's search path", "cannot load libmooncake_store.so"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := checkLibrary(c.cfg, env(c.env))
			assert.Equal(t, CheckLibrary, f.Check)
			assert.Equal(t, Fail, f.Verdict, f.Detail)
			for _, w := range c.want {
				assert.Contains(t, f.Detail, w)
			}
		})
	}
}

// sha256Hex is the lower-case hex SHA-256 of the file at path.
func sha256Hex(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
