package deps

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/build/modules"
)

func TestAllowed(t *testing.T) {
	memdrv := modules.Module{Dir: "memdrv", Imports: []string{"contract", "rowbatch", "github.com/ebitengine/purego"}}
	for pkg, want := range map[string]bool{
		"github.com/kvshare/kvshare/memdrv":                 true, // its own
		"github.com/kvshare/kvshare/memdrv/internal/rawmem": true,
		"github.com/kvshare/kvshare/contract":               true,
		"github.com/kvshare/kvshare/rowbatch/sub":           true,
		"github.com/ebitengine/purego/internal/cgo":         true,
		"github.com/kvshare/kvshare/contractx":              false, // a prefix of a name is not the module
		"github.com/kvshare/kvshare/binding":                false,
		"github.com/BurntSushi/toml":                        false,
		"github.com/ebitengine/puregox":                     false,
	} {
		assert.Equal(t, want, Allowed(memdrv, pkg), pkg)
	}
	assert.True(t, Allowed(modules.Module{Dir: "tools", Imports: []string{"*"}}, "anything/at/all"))

	binding := modules.Module{Dir: "binding", Imports: []string{"=storeconfig"}}
	assert.True(t, Allowed(binding, "github.com/kvshare/kvshare/storeconfig"), "the root package named exactly")
	assert.False(t, Allowed(binding, "github.com/kvshare/kvshare/storeconfig/tomlfile"), "not its subpackages")
}

func TestCheckNamesEveryBrokenRule(t *testing.T) {
	list := modules.List{Modules: []modules.Module{
		{Dir: ".", Imports: []string{"*"}},
		{Dir: "contract"},
		{Dir: "memdrv", Imports: []string{"contract"}, Tags: "x"},
	}}
	var asked []string
	lister := func(root, dir, tags string) ([]string, error) {
		asked = append(asked, dir+"|"+tags)
		switch dir {
		case "contract":
			return []string{"github.com/kvshare/kvshare/contract"}, nil
		default:
			return []string{"github.com/kvshare/kvshare/memdrv", "github.com/kvshare/kvshare/contract",
				"github.com/ebitengine/purego", "github.com/kvshare/kvshare/binding"}, nil
		}
	}
	err := Check("root", list, lister)
	require.Error(t, err)
	assert.ErrorContains(t, err, "memdrv imports github.com/ebitengine/purego")
	assert.ErrorContains(t, err, "memdrv imports github.com/kvshare/kvshare/binding")
	assert.NotContains(t, err.Error(), "imports github.com/kvshare/kvshare/contract")
	assert.Equal(t, []string{"contract|", "memdrv|x"}, asked, "the root (anything allowed) is not listed")

	failing := func(root, dir, tags string) ([]string, error) { return nil, errors.New("go list broke") }
	assert.ErrorContains(t, Check("root", list, failing), "go list broke")
}

// The repository keeps its own rules.
func TestTheRepositoryKeepsItsRules(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: go list over every module")
	}
	assert.NoError(t, Check("../..", modules.Repo, GoList))
}
