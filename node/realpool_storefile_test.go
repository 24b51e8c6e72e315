package node

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/mooncakedrv/pool"
)

// writeMooncakeStoreFile writes a store file naming the loopback pool p,
// started from the Mooncake folder dir, with keys under prefix, and
// returns its path: what a node over the real pool is given.
func writeMooncakeStoreFile(t *testing.T, dir string, p *pool.Pool, prefix string) string {
	t.Helper()
	sum, err := pool.LibrarySHA256(dir)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "store.toml")
	toml := fmt.Sprintf(`[blob]
key_prefix = %s

[mooncake]
library = %s
sdk_sha256 = [%s]
master = %s
metadata_server = %s
protocol = "tcp"
local_hostname = %s
global_segment_size = 0
local_buffer_size = %d
`, strconv.Quote(prefix), strconv.Quote(filepath.Join(dir, pool.Library)), strconv.Quote(sum),
		strconv.Quote(p.MasterAddress()), strconv.Quote(p.MetadataURL()), strconv.Quote(p.Host()), 64<<20)
	require.NoError(t, os.WriteFile(file, []byte(toml), 0o644))
	return file
}
