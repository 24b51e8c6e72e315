package storeconfig_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/storeconfig"
)

func TestNodeZeroAndFullAreValid(t *testing.T) {
	assert.NoError(t, storeconfig.Node{}.Validate(""), "the zero Node: every default")
	assert.NoError(t, storeconfig.Node{
		Socket: "/run/kvshare/node.sock", Mode: 0o660, AllowUIDs: []uint32{0, 1000},
		MaxFrame: storeconfig.MinNodeFrame, MaxAttempts: 1, MaxRows: storeconfig.MaxNodeRows,
		MaxLendBytes: 1, MaxRegions: storeconfig.MaxNodeRegions, OutQueue: 1,
		EngineWait: time.Millisecond, ShutdownWait: 24 * time.Hour, ReclaimAbove: 1, ReclaimWait: time.Second,
	}.Validate(""), "every bound itself is in range")
}

func TestNodeRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    storeconfig.Node
		key  string
		want string
	}{
		{"a relative socket", storeconfig.Node{Socket: "node.sock"}, "socket", `must be an absolute path, got "node.sock"`},
		{"a socket path too long", storeconfig.Node{Socket: "/" + strings.Repeat("s", 107)}, "socket", "is 108 bytes, a Unix socket's path holds at most 107"},
		{"a mode beyond the permission bits", storeconfig.Node{Mode: 0o1777}, "mode", "must be permission bits from 0001 to 0777, got 01777"},
		{"a frame below the largest hello", storeconfig.Node{MaxFrame: storeconfig.MinNodeFrame - 1}, "max_frame", "must be between 65605 and 1073741824, got 65604"},
		{"a frame beyond 1 GiB", storeconfig.Node{MaxFrame: 1<<30 + 1}, "max_frame", "got 1073741825"},
		{"negative attempts", storeconfig.Node{MaxAttempts: -1}, "max_attempts", "must be between 1 and 65536, got -1"},
		{"too many rows", storeconfig.Node{MaxRows: 1<<20 + 1}, "max_rows", "must be between 1 and 1048576"},
		{"lent bytes beyond 64 TiB", storeconfig.Node{MaxLendBytes: 1<<46 + 1}, "max_lend_bytes", "must be between 1 and 70368744177664"},
		{"negative regions", storeconfig.Node{MaxRegions: -3}, "max_regions", "got -3"},
		{"an out queue too long", storeconfig.Node{OutQueue: 1<<20 + 1}, "out_queue", "must be between 1 and 1048576"},
		{"an engine wait under 1ms", storeconfig.Node{EngineWait: time.Microsecond}, "engine_wait", "must be from 1ms to 24h0m0s, got 1µs"},
		{"a shutdown wait beyond a day", storeconfig.Node{ShutdownWait: 25 * time.Hour}, "shutdown_wait", "got 25h0m0s"},
		{"a negative reclaim threshold", storeconfig.Node{ReclaimAbove: -1}, "reclaim_above", "must be between 1 and 70368744177664, got -1"},
		{"a reclaim wait under 1ms", storeconfig.Node{ReclaimWait: time.Nanosecond}, "reclaim_wait", "got 1ns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.n.Validate("store.toml")
			require.ErrorIs(t, err, storeconfig.ErrConfig)
			var e *storeconfig.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "store.toml", e.File)
			assert.Equal(t, "node", e.Section)
			assert.Equal(t, tc.key, e.Key)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.Len(t, storeconfig.Node{Socket: "x", Mode: 0o7777, MaxRows: -1, EngineWait: -1}.Check("f"), 4, "every refusal, not only the first")
}
