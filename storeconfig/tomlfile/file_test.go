package tomlfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/storeconfig"
	"github.com/kvshare/kvshare/storeconfig/tomlfile"
)

// store is a made-up store section with one key of each kind.
var store = map[string][]string{"store": {"addr", "tags", "pool", "tls"}}

type storeSection struct {
	Addr string
	Tags []string
	Pool int64
	TLS  bool
}

// decode decodes a file with [blob] and [store], as a driver would.
func decode(data string) (storeconfig.Blob, storeSection, error) {
	f := tomlfile.Parse("store.toml", []byte(data), store)
	b := f.Blob()
	var s storeSection
	if sec := f.Section("store"); sec != nil {
		s.Addr, _ = sec.String("addr", "")
		s.Tags = sec.Strings("tags")
		s.Pool = sec.NonNegative("pool", 8)
		s.TLS = sec.Bool("tls", false)
	}
	return b, s, f.Finish()
}

func TestAGoodFile(t *testing.T) {
	b, s, err := decode(`
[blob]
key_prefix = "engine"
rows_per_call = 64
bytes_per_call = 1048576

[store]
addr = "10.0.0.5:6379"
tags = ["a", "b"]
pool = 16
tls = true
`)
	require.NoError(t, err)
	assert.Equal(t, storeconfig.Blob{KeyPrefix: "engine", RowsPerCall: 64, BytesPerCall: 1 << 20}, b)
	assert.Equal(t, storeSection{Addr: "10.0.0.5:6379", Tags: []string{"a", "b"}, Pool: 16, TLS: true}, s)
}

// A file without key_prefix (or without [blob]) opens: the backend's
// default prefix applies.
func TestKeysLeftOutGetDefaults(t *testing.T) {
	b, s, err := decode("[store]\naddr = \"x:1\"\n")
	require.NoError(t, err)
	assert.Equal(t, storeconfig.Blob{}, b)
	assert.Equal(t, storeconfig.DefaultKeyPrefix, b.WithDefaults().KeyPrefix)
	assert.Equal(t, int64(8), s.Pool)
	_, _, err = decode("")
	assert.NoError(t, err)
}

func TestRefusalsNameSectionAndKey(t *testing.T) {
	for _, tc := range []struct {
		name, file, section, key, want string
	}{
		{"float for an int", "[store]\npool = 1.5\n", "store", "pool", "wants an integer, got a float (1.5)"},
		{"string for an int", "[store]\npool = \"4\"\n", "store", "pool", "wants an integer, got a string (4)"},
		{"int for a string", "[store]\naddr = 1\n", "store", "addr", "wants a string, got an integer"},
		{"string for a list", "[store]\ntags = \"a\"\n", "store", "tags", "wants an array of strings, got a string"},
		{"ints for strings", "[store]\ntags = [1, 2]\n", "store", "tags", "wants an array of strings, item 0 is int64"},
		{"int for a bool", "[store]\ntls = 1\n", "store", "tls", "wants a boolean, got an integer"},
		{"a table for a value", "[store.pool]\nn = 4\n", "store", "pool", "wants an integer, got a table"},
		{"a negative", "[store]\npool = -1\n", "store", "pool", "must not be negative, got -1"},
		{"an unknown key", "[store]\nport = 1\n", "store", "port", "unknown key (known: addr, tags, pool, tls)"},
		{"a key in another case", "[store]\nAddr = \"x\"\n", "store", "Addr", "unknown key"},
		{"an unknown section", "[mooncake]\nmaster = \"x\"\n", "mooncake", "", "unknown section (known: [blob], [disk], [memory], [node], [scope], [store])"},
		{"a key outside every section", "addr = \"x\"\n", "", "addr", "unknown key"},
		{"a section that is no table", "store = 3\n", "store", "", "must be a table, got an integer"},
		{"an array of tables", "[[store]]\naddr = \"x\"\n", "store", "", "must be a table, got an array of tables"},
		{"a bad prefix", "[blob]\nkey_prefix = \"a b\"\n", "blob", "key_prefix", "not a usable key prefix"},
		{"rows out of range", "[blob]\nrows_per_call = 70000\n", "blob", "rows_per_call", "must be between 0 and 65536, got 70000"},
		{"bytes of the wrong type", "[blob]\nbytes_per_call = \"1\"\n", "blob", "bytes_per_call", "wants an integer, got a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := decode(tc.file)
			require.ErrorIs(t, err, storeconfig.ErrConfig)
			var e *storeconfig.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "store.toml", e.File)
			assert.Equal(t, tc.section, e.Section)
			assert.Equal(t, tc.key, e.Key)
			assert.Contains(t, e.Error(), tc.want)
		})
	}
}

// Every refusal is reported, and a key refused for its type is not
// refused again by its range.
func TestEveryRefusalOnce(t *testing.T) {
	_, _, err := decode("[blob]\nrows_per_call = \"x\"\nbytes_per_call = -1\n[store]\npool = 1.5\nport = 2\n[extra]\n")
	require.Error(t, err)
	var n int
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		n++
		assert.ErrorIs(t, e, storeconfig.ErrConfig)
	}
	assert.Equal(t, 5, n, "%v", err)
}

func TestMalformedTOML(t *testing.T) {
	_, _, err := decode("[store\naddr = 1\n")
	var e *storeconfig.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "malformed TOML", e.Reason)
	assert.Positive(t, e.Line)
	assert.Positive(t, e.Column)
}

func TestRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.toml")
	require.NoError(t, os.WriteFile(path, []byte("[blob]\nkey_prefix = \"x\"\n"), 0o644))
	f := tomlfile.Read(path, nil)
	assert.Equal(t, "x", f.Blob().KeyPrefix)
	assert.NoError(t, f.Finish())

	f = tomlfile.Read(filepath.Join(t.TempDir(), "none.toml"), nil)
	err := f.Finish()
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.ErrorContains(t, err, "cannot read the file")
	assert.False(t, f.Parsed())
	assert.Nil(t, f.Section("blob"))
}

func FuzzParse(f *testing.F) {
	f.Add("[blob]\nkey_prefix = \"engine\"\n[store]\naddr = \"x:1\"\ntags = [\"a\"]\npool = 3\ntls = true\n")
	f.Add("[store.pool]\nn = 1\n[[store]]\n")
	f.Add("a = 1\n[blob]\nrows_per_call = -1\n")
	f.Add("[memory]\ncapacity = 1048576\nchunk_bytes = 4096\nhuge_pages = \"2MiB\"\nlock = true\nworkers = 3\n")
	f.Add("[scope]\nmodel = \"m\"\ntp_rank = 2\nkv_heads = -1\nlayers = \"x\"\n")
	f.Add("[memory]\ncapacity = -1\nchunk_bytes = 100\nhuge_pages = \"\"\nworkers = 0\n")
	f.Fuzz(func(t *testing.T, data string) {
		_, _, err := decode(data)
		if err == nil {
			return
		}
		if !errors.Is(err, storeconfig.ErrConfig) {
			t.Fatalf("a refusal that does not match ErrConfig: %v", err)
		}
		var e *storeconfig.Error
		if !errors.As(err, &e) || e.File != "store.toml" {
			t.Fatalf("a refusal that does not name the file: %v", err)
		}
	})
}
