package storeconfig_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/storeconfig"
)

func TestBlobValidatesItsScope(t *testing.T) {
	good := keys.Scope{Model: "m", Revision: "r", KVDType: "fp16", TokensPerBlock: 16, KVHeads: 8, HeadDim: 128,
		Layers: 32, TPSize: 1, PPSize: 1, HashAlgorithm: "sha256-cbor"}
	require.NoError(t, storeconfig.Blob{Scope: good}.Validate("f.toml"))
	require.NoError(t, storeconfig.Blob{}.Validate("f.toml"), "no scope is allowed")

	bad := good
	bad.KVDType, bad.PPRank = "", 3
	err := storeconfig.Blob{Scope: bad}.Validate("f.toml")
	require.ErrorIs(t, err, storeconfig.ErrConfig)
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var se *storeconfig.Error
		require.ErrorAs(t, e, &se)
		assert.Equal(t, storeconfig.ScopeSection, se.Section)
		got = append(got, se.Error())
	}
	assert.Equal(t, []string{
		"store config f.toml: [scope] kv_dtype: empty (required)",
		"store config f.toml: [scope] pp_rank: 3, want below pp_size (1)",
	}, got)
}

func TestScopeFindings(t *testing.T) {
	assert.Nil(t, storeconfig.ScopeFindings("f", nil))
	other := errors.New("not a field's")
	fs := storeconfig.ScopeFindings("f", other)
	require.Len(t, fs, 1)
	assert.Equal(t, "", fs[0].Key)
	assert.ErrorIs(t, fs[0], other)
	assert.Equal(t, keys.ScopeFieldNames(), storeconfig.ScopeKeys)
}
