// Package poolconfig writes the store config a user would write for a
// loopback pool started with package pool of mooncakedrv: for the
// real-pool tests of package tools (through realpool) and for kvshare
// bench's own pool.
package poolconfig

import (
	"fmt"
	"path/filepath"

	"github.com/kvshare/kvshare/mooncakedrv/pool"
)

// LocalBufferSize is the client's local buffer in the config written.
const LocalBufferSize = 64 << 20

// Text is the text of the store config a user would write for pool
// p, started from the Mooncake folder dir: [blob] key_prefix keyPrefix,
// [mooncake] library dir/lib/…, sdk_sha256 its hash, the pool's master
// and metadata server, protocol tcp, local hostname 127.0.0.1, global
// segment 0 (the client mounts nothing: every byte crosses TCP to the
// pool's segment provider), a LocalBufferSize local buffer. The client
// process also needs p.ClientEnv() in its environment.
func Text(dir string, p *pool.Pool, keyPrefix string) (string, error) {
	sum, err := pool.LibrarySHA256(dir)
	if err != nil {
		return "", fmt.Errorf("hashing the library: %w", err)
	}
	return fmt.Sprintf(`[blob]
key_prefix = %q

[mooncake]
library = %q
sdk_sha256 = [%q]
master = %q
metadata_server = %q
protocol = "tcp"
local_hostname = "127.0.0.1"
global_segment_size = 0
local_buffer_size = %d
`, keyPrefix, filepath.Join(dir, pool.Library), sum, p.MasterAddress(), p.MetadataURL(), LocalBufferSize), nil
}
