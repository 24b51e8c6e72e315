package modules

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMatches(t *testing.T) {
	for _, tc := range []struct {
		entry, pkg string
		want       bool
	}{
		{"contract", "github.com/kvshare/kvshare/contract", true},
		{"contract", "github.com/kvshare/kvshare/contract/sub", true},
		{"contract", "github.com/kvshare/kvshare/contractx", false},
		{"=storeconfig", "github.com/kvshare/kvshare/storeconfig", true},
		{"=storeconfig", "github.com/kvshare/kvshare/storeconfig/tomlfile", false},
		{"golang.org/x/sys", "golang.org/x/sys/unix", true},
		{"golang.org/x/sys", "golang.org/x/sysx", false},
		{"github.com/cespare/xxhash", "github.com/cespare/xxhash/v2", true},
		{"*", "anything/at/all", true},
	} {
		assert.Equal(t, tc.want, Matches(tc.entry, tc.pkg), "%s covers %s", tc.entry, tc.pkg)
	}
}

func TestCheckUsedNamesEveryEntryNoPackageNeeds(t *testing.T) {
	g, err := decodeGraph(strings.NewReader(stream))
	require.NoError(t, err)
	list := List{Modules: []Module{
		{Dir: "tools", Imports: []string{"*"}}, // not checked, and no graph needed
		{Dir: "m", Imports: []string{"s", "golang.org/x/sys", "keys", "=s/sub", "github.com/BurntSushi/toml"}},
	}}
	err = list.CheckUsed(map[string]Graph{"m": g})
	require.Error(t, err)
	for _, unused := range []string{"keys", "=s/sub", "github.com/BurntSushi/toml"} {
		assert.ErrorContains(t, err, "lets m import "+unused+", which none")
	}
	assert.NotContains(t, err.Error(), "import s,")
	assert.NotContains(t, err.Error(), "golang.org/x/sys,")

	list.Modules[1].Imports = []string{"s", "golang.org/x/sys"}
	assert.NoError(t, list.CheckUsed(map[string]Graph{"m": g}))
	assert.ErrorContains(t, list.CheckUsed(nil), "no graph of m")
	list.Modules[1].Dir = "n"
	assert.ErrorContains(t, list.CheckUsed(map[string]Graph{"n": g}), "the graph of n is of module github.com/kvshare/kvshare/m")
}
