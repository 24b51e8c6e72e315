package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/keys"
)

// keyScope is the scope of the key command's tests, and scopeArgs its
// fields as the command's flags.
var keyScope = keys.Scope{Model: "meta-llama/Llama-3.1-8B-Instruct", Revision: "0e9e39f2", KVDType: "fp16",
	TokensPerBlock: 16, KVHeads: 8, HeadDim: 128, Layers: 32, TPSize: 2, PPSize: 1, HashAlgorithm: "sha256-cbor", Tenant: "acme"}

var scopeArgs = []string{"--model", "meta-llama/Llama-3.1-8B-Instruct", "--revision", "0e9e39f2", "--kv-dtype", "fp16",
	"--tokens-per-block", "16", "--kv-heads", "8", "--head-dim", "128", "--layers", "32", "--tp-size", "2", "--pp-size", "1",
	"--hash-algorithm", "sha256-cbor", "--tenant", "acme"}

// keyOf is the key keys makes of name under prefix and scope.
func keyOf(t *testing.T, prefix string, scope keys.Scope, name []byte) string {
	t.Helper()
	stem, err := keys.NewScopedStem(prefix, scope)
	require.NoError(t, err)
	k, err := stem.Key(name)
	require.NoError(t, err)
	return k
}

// runKey runs `kvshare key args…` and returns its status and output.
func runKey(args ...string) (int, string, string) {
	var out, errs bytes.Buffer
	code := run(append([]string{"key"}, args...), &out, &errs)
	return code, out.String(), errs.String()
}

func TestKeyCommandFromFlags(t *testing.T) {
	code, out, errs := runKey(append(scopeArgs, "row-0", "row-1")...)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, keyOf(t, "kvshare", keyScope, []byte("row-0"))+"\n"+keyOf(t, "kvshare", keyScope, []byte("row-1"))+"\n", out)
	assert.Empty(t, errs)

	code, out, errs = runKey(append(scopeArgs, "--prefix", "kv/run-1", "--hex", "-v", "002aff")...)
	require.Equal(t, 0, code, errs)
	text, err := keyScope.MarshalText()
	require.NoError(t, err)
	digest, err := keyScope.Digest()
	require.NoError(t, err)
	assert.Equal(t, "scope "+string(text)+"\ndigest "+digest.String()+"\n"+keyOf(t, "kv/run-1", keyScope, []byte{0, 0x2a, 0xff})+"\n", out)
	assert.Contains(t, out, "kv/run-1/s1-"+digest.String()+"/v1/002aff")
}

func TestKeyCommandFromAStoreFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.toml")
	require.NoError(t, os.WriteFile(path, []byte(`
[blob]
key_prefix = "engine"

[scope]
model = "meta-llama/Llama-3.1-8B-Instruct"
revision = "0e9e39f2"
kv_dtype = "fp16"
tokens_per_block = 16
kv_heads = 8
head_dim = 128
layers = 32
tp_size = 2
pp_size = 1
hash_algorithm = "sha256-cbor"
tenant = "acme"

[redis]
addr = "127.0.0.1:6379"
`), 0o600))
	code, out, errs := runKey("--store", path, "row-0")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, keyOf(t, "engine", keyScope, []byte("row-0"))+"\n", out)

	// A flag overrides the file's field: the other tensor-parallel rank.
	rank1 := keyScope
	rank1.TPRank = 1
	code, out, errs = runKey("--store", path, "--tp-rank", "1", "--prefix", "kv", "row-0")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, keyOf(t, "kv", rank1, []byte("row-0"))+"\n", out)
	assert.NotEqual(t, keyOf(t, "kv", keyScope, []byte("row-0"))+"\n", out)
}

func TestKeyCommandUnscoped(t *testing.T) {
	code, out, errs := runKey("--unscoped", "--prefix", "kv", "--hex", "002aff")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "kv/v1/002aff\n", out)
}

func TestKeyCommandRefusals(t *testing.T) {
	dir := t.TempDir()
	badFile := filepath.Join(dir, "bad.toml")
	require.NoError(t, os.WriteFile(badFile, []byte("[scope]\nmodel = \"m\"\nkv_heads = -1\n"), 0o600))
	without := func(flag string) []string {
		i := slices.Index(scopeArgs, flag)
		return append(append([]string{}, scopeArgs[:i]...), scopeArgs[i+2:]...)
	}
	with := func(flag, v string) []string {
		args := append([]string{}, scopeArgs...)
		args[slices.Index(args, flag)+1] = v
		return args
	}
	for _, c := range []struct {
		name string
		args []string
		msg  string
	}{
		{"no name", scopeArgs, "no name given"},
		{"no scope", []string{"row-0"}, "no scope: give its fields"},
		{"unscoped with a scope", append(scopeArgs, "--unscoped", "row-0"), "--unscoped, but a scope is given"},
		{"a required field left out", append(without("--kv-dtype"), "row-0"), "kv_dtype: empty (required)"},
		{"a number not decimal", append(with("--kv-heads", "8x"), "row-0"), `kv_heads: number "8x" holds byte 'x'`},
		{"a rank at the size", append(scopeArgs, "--tp-rank", "2", "row-0"), "tp_rank: 2, want below tp_size (2)"},
		{"a bad prefix", append(scopeArgs, "--prefix", "a//b", "row-0"), "keys: invalid prefix"},
		{"a name not hex", append(scopeArgs, "--hex", "0g"), `name 0 ("0g") is not hex`},
		{"an empty name", append(scopeArgs, ""), "name 0 (\"\"): keys: invalid name: empty"},
		{"a bad [scope]", []string{"--store", badFile, "row-0"}, "[scope] kv_heads: must be between 0 and 4294967295, got -1"},
		{"no such file", []string{"--store", filepath.Join(dir, "none.toml"), "row-0"}, "cannot read the file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runKey(c.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.Contains(t, errs, c.msg)
			assert.True(t, strings.HasPrefix(errs, "kvshare key: "), errs)
		})
	}
}
