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
			want:    []string{missing, "from [mooncake] library", "no such file", "\nchange [mooncake] library in "},
			notWant: mooncakesdk.EnvLibrary},
		{name: "missing file from the environment", cfg: libraryConfig(t, ""),
			env:     map[string]string{mooncakesdk.EnvLibrary: missing},
			want:    []string{missing, "from $KVSHARE_MOONCAKE_LIB", "\nchange the KVSHARE_MOONCAKE_LIB variable to the path of a libmooncake_store.so"},
			notWant: "change [mooncake] library"},
		{name: "hash not pinned", cfg: libraryConfig(t, notALibrary, otherPin),
			want:    []string{notALibrary, sum, "sdk_sha256", otherPin, "store.toml"},
			notWant: "change"}, // the file is found; the pin is the question
		{name: "not a library", cfg: libraryConfig(t, notALibrary, sum),
			want: []string{"cannot load " + notALibrary, "change [mooncake] library in "}},
		{name: "found on the search path, no function", cfg: libraryConfig(t, "libc.so.6"),
			want: []string{"libc.so.6 (from [mooncake] library", "lacks 19 of the 19 store_c.h functions", "mooncake_store_create", "mooncake_store_unregister_buffer",
				"change [mooncake] library in "}},
		{name: "default name not found", cfg: libraryConfig(t, ""),
			want: []string{"libmooncake_store.so (from the loader's search path", "cannot load libmooncake_store.so",
				"\nthe loader's search path did not find libmooncake_store.so", "with [mooncake] library in ", "or the KVSHARE_MOONCAKE_LIB variable"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := checkLibrary(c.cfg, env(c.env))
			assert.Equal(t, CheckLibrary, f.Check)
			assert.Equal(t, Fail, f.Verdict, f.Detail)
			for _, w := range c.want {
				assert.Contains(t, f.Detail, w)
			}
			assert.Contains(t, f.Detail, c.cfg.File, "names the file")
			if c.notWant != "" {
				assert.NotContains(t, f.Detail, c.notWant)
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

// Each source names its own setting to change.
func TestLibraryFix(t *testing.T) {
	for _, c := range []struct {
		from      librarySource
		notLoaded bool
		want      string
	}{
		{fromConfig, true, "change [mooncake] library in s.toml to the path of a libmooncake_store.so built with store_c.h"},
		{fromEnvironment, true, "change the KVSHARE_MOONCAKE_LIB variable to the path of a libmooncake_store.so built with store_c.h (s.toml sets no [mooncake] library"},
		{fromSearchPath, true, "the loader's search path did not find libmooncake_store.so: name the library by path, with [mooncake] library in s.toml or the KVSHARE_MOONCAKE_LIB variable"},
		{fromSearchPath, false, "the loader's search path found a libmooncake_store.so that is not Mooncake's: name the library by path"},
	} {
		assert.Contains(t, c.from.fix("s.toml", c.notLoaded), c.want)
	}
	assert.Equal(t, []string{"[mooncake] library", "$KVSHARE_MOONCAKE_LIB", "the loader's search path"},
		[]string{fromConfig.String(), fromEnvironment.String(), fromSearchPath.String()})
}
