package tomlfile_test

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/storeconfig"
	"github.com/kvshare/kvshare/storeconfig/tomlfile"
)

var storeSections = []string{"blob", "mooncake", "redis", "memory", "disk", "node", "scope"}

func TestNearest(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"mooncak", "mooncake"},   // a letter dropped
		{"moooncake", "mooncake"}, // one added
		{"redsi", "redis"},        // two swapped
		{"Mooncake", "mooncake"},  // another case
		{"dsk", "disk"},
		{"mooncke", "mooncake"},
		{"mooncakes", "mooncake"},
		{"mncake", "mooncake"}, // two edits in a long name
		{"pool", ""},           // no known name is that close
		{"sk", ""},             // two edits in a short name are too many
		{"", ""},
	} {
		assert.Equal(t, tc.want, tomlfile.Nearest(tc.name, storeSections), "%q", tc.name)
	}
	assert.Empty(t, tomlfile.Nearest("x", nil))
}

// An unknown section or key is refused naming the known ones, and the
// nearest of them when it is close.
func TestUnknownNamesItsNearest(t *testing.T) {
	for _, tc := range []struct {
		name, file, section, key string
		want                     []string
		not                      string
	}{
		{"a section a letter short", "[stor]\naddr = \"x\"\n", "stor", "", []string{"unknown section (known: [blob], ", "did you mean [store]?"}, ""},
		{"a section in another case", "[Blob]\n", "Blob", "", []string{"did you mean [blob]?"}, ""},
		{"a section far from any", "[pool]\n", "pool", "", []string{"unknown section (known: "}, "did you mean"},
		{"a key a letter short", "[store]\nadr = \"x\"\n", "store", "adr", []string{"unknown key (known: addr, tags, pool, tls)", "did you mean addr?"}, ""},
		{"a key of [blob] misspelt", "[blob]\nkey_prefx = \"x\"\n", "blob", "key_prefx", []string{"did you mean key_prefix?"}, ""},
		{"a key far from any", "[store]\nport = 1\n", "store", "port", []string{"unknown key"}, "did you mean"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := decode(tc.file)
			var e *storeconfig.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tc.section, e.Section)
			assert.Equal(t, tc.key, e.Key)
			for _, w := range tc.want {
				assert.Contains(t, e.Error(), w)
			}
			if tc.not != "" {
				assert.NotContains(t, e.Error(), tc.not)
			}
		})
	}
}

func TestUnknownSections(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"[store]\naddr = \"x\"\n[blob]\n", nil},
		{"[mooncak]\nmaster = \"x\"\n[blob]\n[redsi]\n[mooncak.x]\n", []string{"mooncak", "redsi"}},
		{"[[many]]\n[a.b]\n", []string{"many", "a"}},
		{"loose = 1\n", nil}, // a key outside every section is no section
		{"[store\n", nil},    // malformed: no sections at all
	} {
		f := tomlfile.Parse("store.toml", []byte(tc.file), store)
		assert.Equal(t, tc.want, f.UnknownSections(), "%q", tc.file)
	}
}

// FuzzNearest: a suggestion is one of the names known, and a name
// that is known (in any case) suggests itself.
func FuzzNearest(f *testing.F) {
	f.Add("mooncak", "mooncake")
	f.Add("", "")
	f.Add("réd", "red")
	f.Fuzz(func(t *testing.T, name, other string) {
		if !utf8.ValidString(name) || !utf8.ValidString(other) || len(name) > 256 || len(other) > 256 {
			return
		}
		known := append([]string{other}, storeSections...)
		got := tomlfile.Nearest(name, known)
		if got != "" {
			require.Contains(t, known, got)
		}
		require.Equal(t, other, tomlfile.Nearest(other, known[:1]), "a name is nearest itself")
	})
}
