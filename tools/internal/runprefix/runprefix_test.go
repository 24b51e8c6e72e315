package runprefix

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/keys"
)

func TestPrefixShape(t *testing.T) {
	now := time.Date(2026, 11, 29, 19, 18, 21, 0, time.FixedZone("CET", 3600))
	got, err := at("team/kv", "roundtrip", now, [4]byte{0x9f, 0x3a, 0x04, 0xc2})
	require.NoError(t, err)
	assert.Equal(t, "team/kv/roundtrip/20261129t181821z-9f3a04c2", got, "UTC, lower case")

	got, err = at("", "doctor", now, [4]byte{})
	require.NoError(t, err)
	assert.Equal(t, "kvshare/doctor/20261129t181821z-00000000", got, "empty base")
}

func TestRunsGetDistinctPrefixes(t *testing.T) {
	a, err := New("kvshare", "roundtrip")
	require.NoError(t, err)
	b, err := New("kvshare", "roundtrip")
	require.NoError(t, err)
	assert.NotEqual(t, a, b)
	assert.True(t, strings.HasPrefix(a, "kvshare/roundtrip/"), a)
}

func TestBadBaseIsRefused(t *testing.T) {
	for name, base := range map[string]string{
		"trailing slash": "kvshare/",
		"space":          "kv share",
		"dot segment":    "kv/../x",
		"too long":       strings.Repeat("k", keys.MaxPrefixBytes-10),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(base, "doctor")
			require.ErrorIs(t, err, keys.ErrInvalidPrefix)
			assert.Contains(t, err.Error(), base)
		})
	}
}
