package tomlfile_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/storeconfig"
	"github.com/kvshare/kvshare/storeconfig/tomlfile"
)

// scopeSection is a [scope] section stating every field.
const scopeSection = `
[scope]
model = "meta-llama/Llama-3.1-8B-Instruct"
revision = "0e9e39f249a16976918f6564b8830bc894c89659"
adapter = "sql-lora"
kv_dtype = "fp8_e4m3"
quantization = "per-tensor"
tokens_per_block = 16
kv_heads = 8
head_dim = 128
first_layer = 16
layers = 16
tp_rank = 1
tp_size = 2
pp_rank = 1
pp_size = 2
hash_algorithm = "sha256-cbor"
hash_seed = "42"
tenant = "acme"
`

var wantScope = keys.Scope{
	Model: "meta-llama/Llama-3.1-8B-Instruct", Revision: "0e9e39f249a16976918f6564b8830bc894c89659", Adapter: "sql-lora",
	KVDType: "fp8_e4m3", Quantization: "per-tensor", TokensPerBlock: 16, KVHeads: 8, HeadDim: 128, FirstLayer: 16, Layers: 16,
	TPRank: 1, TPSize: 2, PPRank: 1, PPSize: 2, HashAlgorithm: "sha256-cbor", HashSeed: "42", Tenant: "acme",
}

func TestScopeSection(t *testing.T) {
	b, _, err := decode("[blob]\nkey_prefix = \"engine\"\n" + scopeSection + "[store]\naddr = \"x:1\"\n")
	require.NoError(t, err)
	assert.Equal(t, storeconfig.Blob{KeyPrefix: "engine", Scope: wantScope}, b)
	require.NoError(t, b.Validate("store.toml"))

	// Without the section: no scope, today's keys.
	b, _, err = decode("[blob]\nkey_prefix = \"engine\"\n")
	require.NoError(t, err)
	assert.True(t, b.Scope.IsZero())
}

// Every reader knows [scope]: one that reads only its own section and
// calls Finish still accepts a good [scope] and refuses a bad one.
func TestEveryReaderKnowsTheScope(t *testing.T) {
	f := tomlfile.Parse("store.toml", []byte(scopeSection+"[other]\nx = 1\n"), map[string][]string{"other": {"x"}})
	_ = f.Section("other").Int("x", 0)
	require.NoError(t, f.Finish())

	f = tomlfile.Parse("store.toml", []byte(strings.Replace(scopeSection, "tp_rank = 1", "tp_rank = 2", 1)), nil)
	err := f.Finish()
	var e *storeconfig.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, storeconfig.ScopeSection, e.Section)
	assert.Equal(t, "tp_rank", e.Key)
	assert.Contains(t, e.Error(), "2, want below tp_size (2)")
}

func TestScopeRefusalsNameTheKey(t *testing.T) {
	for _, tc := range []struct {
		name, from, to, key, want string
	}{
		{"model left out", `model = "meta-llama/Llama-3.1-8B-Instruct"`, "", "model", "is required (left out)"},
		{"model empty", `model = "meta-llama/Llama-3.1-8B-Instruct"`, `model = ""`, "model", "empty (required)"},
		{"revision left out", `revision = "0e9e39f249a16976918f6564b8830bc894c89659"`, "", "revision", "is required (left out)"},
		{"adapter control", `adapter = "sql-lora"`, `adapter = "a\tb"`, "adapter", "control character U+0009"},
		{"kv_dtype an integer", `kv_dtype = "fp8_e4m3"`, `kv_dtype = 8`, "kv_dtype", "wants a string, got an integer"},
		{"quantization too long", `quantization = "per-tensor"`, `quantization = "` + strings.Repeat("q", 257) + `"`, "quantization", "257 bytes, over the limit of 256"},
		{"tokens_per_block a string", `tokens_per_block = 16`, `tokens_per_block = "16"`, "tokens_per_block", "wants an integer, got a string"},
		{"tokens_per_block 0", `tokens_per_block = 16`, `tokens_per_block = 0`, "tokens_per_block", "0, want at least 1"},
		{"kv_heads negative", `kv_heads = 8`, `kv_heads = -8`, "kv_heads", "must be between 0 and 4294967295, got -8"},
		{"head_dim over 32 bits", `head_dim = 128`, `head_dim = 4294967296`, "head_dim", "must be between 0 and 4294967295, got 4294967296"},
		{"first_layer a float", `first_layer = 16`, `first_layer = 1.5`, "first_layer", "wants an integer, got a float"},
		{"layers left out", `layers = 16`, "", "layers", "is required (left out)"},
		{"tp_rank at tp_size", `tp_rank = 1`, `tp_rank = 2`, "tp_rank", "2, want below tp_size (2)"},
		{"tp_size left out", `tp_size = 2`, "", "tp_size", "is required (left out)"},
		{"pp_rank over pp_size", `pp_rank = 1`, `pp_rank = 7`, "pp_rank", "7, want below pp_size (2)"},
		{"pp_size 0", `pp_size = 2`, `pp_size = 0`, "pp_size", "0, want at least 1"},
		{"hash_algorithm left out", `hash_algorithm = "sha256-cbor"`, "", "hash_algorithm", "is required (left out)"},
		{"hash_seed a bool", `hash_seed = "42"`, `hash_seed = true`, "hash_seed", "wants a string, got a boolean"},
		{"tenant control", `tenant = "acme"`, `tenant = "ac\u0000me"`, "tenant", "control character U+0000"},
		{"an unknown key", `tenant = "acme"`, "tenant = \"acme\"\ntenant_id = \"x\"", "tenant_id", "unknown key (known: model, revision"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Contains(t, scopeSection, tc.from)
			b, _, err := decode(strings.Replace(scopeSection, tc.from, tc.to, 1))
			require.ErrorIs(t, err, storeconfig.ErrConfig)
			var e *storeconfig.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "store.toml", e.File)
			assert.Equal(t, storeconfig.ScopeSection, e.Section)
			assert.Equal(t, tc.key, e.Key)
			assert.Contains(t, e.Error(), tc.want)
			if tc.key != "tenant_id" {
				assert.True(t, b.Scope.IsZero(), "a refused scope reads as no scope")
			}
		})
	}
}

// Every broken field is refused once, under its key.
func TestEveryScopeRefusalOnce(t *testing.T) {
	_, _, err := decode("[scope]\nkv_heads = -1\ntokens_per_block = \"x\"\n")
	require.Error(t, err)
	var keysRefused []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var se *storeconfig.Error
		require.ErrorAs(t, e, &se)
		keysRefused = append(keysRefused, se.Key)
	}
	assert.Equal(t, []string{"tokens_per_block", "kv_heads", "model", "revision", "kv_dtype", "head_dim", "layers", "tp_size", "pp_size", "hash_algorithm"}, keysRefused)
}
