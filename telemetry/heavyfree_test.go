package telemetry_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The module reads drivers through the kit, never a driver with a heavy
// dependency: its go.mod (which, tidy, lists every module that provides
// a package its packages or their tests build) requires no Mooncake
// driver or SDK, no purego, no TOML parser and no Redis client. (mage
// deps checks what its packages import, tests aside; this checks the
// tests too.)
func TestNoHeavyModuleRequired(t *testing.T) {
	gomod, err := os.ReadFile("go.mod")
	require.NoError(t, err)
	for _, heavy := range []string{
		"github.com/kvshare/kvshare/mooncakedrv ", "github.com/kvshare/kvshare/mooncakesdk ",
		"github.com/ebitengine/purego", "github.com/BurntSushi/toml", "github.com/redis/rueidis",
	} {
		assert.NotContains(t, string(gomod), "\t"+heavy, "telemetry's go.mod requires %s", heavy)
	}
}
