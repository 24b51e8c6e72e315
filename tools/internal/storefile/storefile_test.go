package storefile

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/storeconfig"
	"github.com/kvshare/kvshare/storeconfig/tomlfile"
)

func TestKinds(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       Kind
	}{
		{"mooncake", "[blob]\nkey_prefix = \"k\"\n\n[mooncake]\nmaster = \"127.0.0.1:1\"\n", Mooncake},
		{"redis", "[redis]\naddress = \"127.0.0.1:6379\"\n", Redis},
		{"unknown keys are the store's to refuse", "[redis]\nadress = 1\n[extra]\n", Redis},
		{"an empty section", "[mooncake]\n", Mooncake},
		{"memory", "[blob]\nkey_prefix = \"k\"\n[memory]\ncapacity = 1048576\n", Memory},
		{"memory's keys are its reader's to check", "[memory]\nsize = 1\n", Memory},
		{"disk", "[blob]\nkey_prefix = \"k\"\n[disk]\ndir = \"/kv\"\ncapacity = 0\n", Disk},
		{"disk's keys are its reader's to check", "[disk]\nsize = 1\n", Disk},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, err := Parse("store.toml", []byte(c.text))
			require.NoError(t, err)
			assert.Equal(t, c.want, k)
		})
	}
	assert.Equal(t, "Mooncake", Mooncake.String())
	assert.Equal(t, "Redis", Redis.String())
	assert.Equal(t, "the embedded store", Memory.String())
	assert.Equal(t, "the disk tier", Disk.String())
	assert.Equal(t, "Kind(0)", Kind(0).String())
}

func TestRefusalsNameTheFile(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       []string
	}{
		{"both", "[mooncake]\n[redis]\n", []string{"holds both [mooncake] and [redis]", "one store"}},
		{"neither", "[blob]\nkey_prefix = \"k\"\n", []string{"holds neither [mooncake]", "nor [redis]", "nor [memory]"}},
		{"memory and redis", "[memory]\ncapacity = 0\n[redis]\n", []string{"holds both [memory] (the embedded store) and [redis]", "one store"}},
		{"memory and mooncake", "[mooncake]\n[memory]\ncapacity = 0\n", []string{"holds both [memory] (the embedded store) and [mooncake]"}},
		{"disk and redis", "[disk]\n[redis]\n", []string{"holds both [disk] (the disk tier) and [redis]", "one store"}},
		{"empty", "", []string{"holds neither"}},
		{"malformed", "[redis\n", []string{"malformed TOML"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("dir/store.toml", []byte(c.text))
			require.ErrorIs(t, err, ErrKind)
			assert.Contains(t, err.Error(), "dir/store.toml")
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "redis.toml")
	require.NoError(t, os.WriteFile(path, []byte("[redis]\naddress = \"127.0.0.1:6379\"\n"), 0o644))
	k, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, Redis, k)

}

// A file that is not there, or cannot be read, or is not TOML, is
// refused for that, first: not as a file whose store is unclear.
func TestAFileThatCannotBeReadLeadsWithWhy(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nosuch.toml")
	_, err := Read(missing)
	require.ErrorIs(t, err, ErrKind)
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.True(t, strings.HasPrefix(err.Error(), "store file "+missing+" does not exist"), "leads with the file missing: %v", err)

	for _, c := range []struct {
		name, path string
		want       string
	}{
		{"a directory", dir, "cannot read the file"},
		{"malformed", writeFile(t, "[redis\n"), "malformed TOML"},
	} {
		_, err := Read(c.path)
		require.ErrorIs(t, err, ErrKind, c.name)
		assert.NotErrorIs(t, err, fs.ErrNotExist, c.name)
		assert.NotContains(t, err.Error(), "cannot tell which store", c.name)
		assert.Contains(t, err.Error(), c.path, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
}

// A file whose only section is misspelt is refused naming that section,
// the store section it is likely meant for, and every store section.
func TestAnUnknownSectionIsNamed(t *testing.T) {
	known := []string{"[mooncake]", "[redis]", "[memory]", "[disk]"}
	for _, c := range []struct {
		name, text string
		want       []string
		not        string
	}{
		{"misspelt", "[mooncak]\nmaster = \"x:1\"\n", []string{"holds [mooncak] (did you mean [mooncake]?), a section no store file takes"}, ""},
		{"in another case", "[blob]\n[Redis]\naddress = \"x:1\"\n", []string{"[Redis] (did you mean [redis]?)"}, ""},
		{"two", "[dsk]\n[pool]\n", []string{"[dsk] (did you mean [disk]?), [pool], sections no store file takes"}, ""},
		{"far from any", "[pool]\n", []string{"[pool]"}, "did you mean"},
		{"only [blob]", "[blob]\nkey_prefix = \"k\"\n", nil, "no store file takes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("dir/store.toml", []byte(c.text))
			require.ErrorIs(t, err, ErrKind)
			for _, w := range append(append([]string{"dir/store.toml"}, known...), c.want...) {
				assert.Contains(t, err.Error(), w)
			}
			if c.not != "" {
				assert.NotContains(t, err.Error(), c.not)
			}
		})
	}
}

// FuzzParse says which store any file is for, or refuses it naming the
// file and wrapping ErrKind; a file refused for holding no store
// section names every section of it no store file takes.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"[mooncake]\n", "[redis]\n[mooncake]\n", "[mooncak]\n", "[disk]\n[memory]\n", "[blob]\n", "[a.b]\nc = 1\n", "x = 1\n[[redsi]]\n", "[redis\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		k, err := Parse("store.toml", []byte(text))
		if err == nil {
			require.Contains(t, []Kind{Mooncake, Redis, Memory, Disk}, k)
			return
		}
		require.ErrorIs(t, err, ErrKind)
		require.Contains(t, err.Error(), "store.toml")
		if strings.Contains(err.Error(), "holds neither") {
			for _, s := range tomlfile.Parse("store.toml", []byte(text), sections).UnknownSections() {
				require.Contains(t, err.Error(), "["+s+"]")
			}
		}
	})
}

func writeFile(t *testing.T, text string) string {
	path := filepath.Join(t.TempDir(), "store.toml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

func TestNode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "store.toml")
	require.NoError(t, os.WriteFile(path, []byte("[mooncake]\nmaster = \"x:1\"\n[node]\nsocket = \"/run/kvshare/node.sock\"\nallow_uids = [1000]\n"), 0o644))
	n, err := Node(path)
	require.NoError(t, err)
	assert.Equal(t, "/run/kvshare/node.sock", n.Socket)
	assert.Equal(t, []uint32{1000}, n.AllowUIDs)

	require.NoError(t, os.WriteFile(path, []byte("[redis]\naddress = \"x:1\"\n[node]\nmax_attempts = -1\n"), 0o644))
	_, err = Node(path)
	var e *storeconfig.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, path, e.File)
	assert.Equal(t, "max_attempts", e.Key)

	_, err = Node(filepath.Join(dir, "nosuch.toml"))
	assert.ErrorIs(t, err, storeconfig.ErrConfig)
}
