package storeconfig_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/storeconfig"
)

// workers = 0 means the default, as diskdrv.DriverOptions takes it; a
// negative count is refused naming the key, and saying what 0 means.
func TestDiskWorkers(t *testing.T) {
	for _, tc := range []struct {
		workers int
		refused string
	}{
		{0, ""},
		{1, ""},
		{storeconfig.MaxDiskWorkers, ""},
		{-1, "must be between 0 (the default, 4) and 1024, got -1"},
		{storeconfig.MaxDiskWorkers + 1, "got 1025"},
	} {
		d := storeconfig.Disk{Dir: "/kv", Workers: tc.workers}
		err := d.Validate("store.toml")
		if tc.refused == "" {
			require.NoError(t, err, "workers %d", tc.workers)
			continue
		}
		var e *storeconfig.Error
		require.ErrorAs(t, err, &e, "workers %d", tc.workers)
		assert.Equal(t, storeconfig.DiskSection, e.Section)
		assert.Equal(t, storeconfig.KeyWorkers, e.Key)
		assert.Contains(t, e.Error(), tc.refused)
	}
	assert.Equal(t, storeconfig.DefaultDiskWorkers, storeconfig.Disk{}.WithDefaults().Workers)
}
