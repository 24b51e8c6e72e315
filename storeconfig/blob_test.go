package storeconfig_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/storeconfig"
)

func TestBlobDefaults(t *testing.T) {
	assert.Equal(t, storeconfig.Blob{KeyPrefix: "kvshare"}, storeconfig.Blob{}.WithDefaults())
	assert.Equal(t, "engine", storeconfig.Blob{KeyPrefix: "engine"}.WithDefaults().KeyPrefix)
	assert.NoError(t, storeconfig.Blob{}.Validate(""), "the zero Blob is valid: the default prefix, no caps")
}

func TestBlobRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		blob storeconfig.Blob
		key  string
		want string
	}{
		{"a prefix with a space", storeconfig.Blob{KeyPrefix: "my prefix"}, "key_prefix", "not a usable key prefix"},
		{"a prefix with a NUL", storeconfig.Blob{KeyPrefix: "a\x00b"}, "key_prefix", "not a usable key prefix"},
		{"negative rows", storeconfig.Blob{RowsPerCall: -1}, "rows_per_call", "must be between 0 and 65536, got -1"},
		{"too many rows", storeconfig.Blob{RowsPerCall: 1<<16 + 1}, "rows_per_call", "must be between 0 and 65536"},
		{"negative bytes", storeconfig.Blob{BytesPerCall: -5}, "bytes_per_call", "must be between 0 and 1099511627776, got -5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.blob.Validate("store.toml")
			require.ErrorIs(t, err, storeconfig.ErrConfig)
			var e *storeconfig.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "store.toml", e.File)
			assert.Equal(t, "blob", e.Section)
			assert.Equal(t, tc.key, e.Key)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	err := storeconfig.Blob{KeyPrefix: "a b", RowsPerCall: -1, BytesPerCall: -1}.Validate("f")
	assert.Len(t, storeconfig.Blob{KeyPrefix: "a b", RowsPerCall: -1, BytesPerCall: -1}.Check("f"), 3, "every refusal, not only the first")
	assert.ErrorContains(t, err, "[blob] bytes_per_call")
}

func TestErrorText(t *testing.T) {
	cause := errors.New("cause")
	for _, tc := range []struct {
		err  *storeconfig.Error
		want string
	}{
		{&storeconfig.Error{File: "s.toml", Section: "blob", Key: "key_prefix", Reason: "bad"}, "store config s.toml: [blob] key_prefix: bad"},
		{&storeconfig.Error{File: "s.toml", Section: "redis", Reason: "must be a table"}, "store config s.toml: [redis]: must be a table"},
		{&storeconfig.Error{File: "s.toml", Key: "x", Reason: "unknown key"}, "store config s.toml: x (outside every section): unknown key"},
		{&storeconfig.Error{File: "s.toml", Line: 3, Column: 7, Reason: "malformed TOML", Err: cause}, "store config s.toml:3:7: malformed TOML: cause"},
		{&storeconfig.Error{Section: "blob", Key: "rows_per_call", Reason: "negative"}, "store config: [blob] rows_per_call: negative"},
	} {
		assert.Equal(t, tc.want, tc.err.Error())
		assert.ErrorIs(t, tc.err, storeconfig.ErrConfig)
	}
	assert.ErrorIs(t, &storeconfig.Error{Err: cause}, cause)
	var f storeconfig.Findings
	assert.NoError(t, f.Err())
	f.Addf("a", "blob", "k", "one %d", 1)
	assert.Equal(t, "store config a: [blob] k: one 1", f.Err().Error())
	f.Addf("a", "blob", "j", "two")
	assert.Equal(t, fmt.Sprint(f[0], "\n", f[1]), f.Err().Error())
}
