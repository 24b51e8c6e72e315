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

// A tenant's spec reads into its tenant, and its String reads back the
// same; every bad spec is refused naming what is wrong.
func TestParseNodeTenant(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want storeconfig.NodeTenant
	}{
		{"uids=1000,1001 gids=100 max_lent_bytes=8589934592 max_bytes_in_flight=1073741824 max_attempts_in_flight=32 tenant=acme",
			storeconfig.NodeTenant{Name: "acme", UIDs: []uint32{1000, 1001}, GIDs: []uint32{100}, MaxLentBytes: 8 << 30, MaxBytesInFlight: 1 << 30, MaxAttemptsInFlight: 32}},
		{"gids=0 tenant=big corp, = inc", storeconfig.NodeTenant{Name: "big corp, = inc", GIDs: []uint32{0}}},
		{"uids=7 tenant=  spaced ", storeconfig.NodeTenant{Name: "  spaced ", UIDs: []uint32{7}}},
		{"tenant=", storeconfig.NodeTenant{}},
		{"  max_attempts_in_flight=1   tenant=", storeconfig.NodeTenant{MaxAttemptsInFlight: 1}},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			got, err := storeconfig.ParseNodeTenant(tc.spec)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			again, err := storeconfig.ParseNodeTenant(got.String())
			require.NoError(t, err)
			assert.Equal(t, got, again, "String reads back the same tenant")
		})
	}
	for _, tc := range []struct{ spec, want string }{
		{"", "no tenant=NAME"},
		{"uids=1", "no tenant=NAME"},
		{"uids tenant=a", `want key=value, got "uids"`},
		{"uid=1 tenant=a", "uid: unknown setting (known: uids, gids"},
		{"uids=1,x tenant=a", `uids: "x" is not an id`},
		{"gids=-1 tenant=a", `gids: "-1" is not an id`},
		{"uids=4294967296 tenant=a", `"4294967296" is not an id (0 to 4294967295)`},
		{"uids=1 max_lent_bytes=0 tenant=a", `max_lent_bytes: "0": want an integer from 1`},
		{"uids=1 max_bytes_in_flight=1GiB tenant=a", `max_bytes_in_flight: "1GiB"`},
		{"uids=1 max_attempts_in_flight=2147483648 tenant=a", "want an integer from 1 to 2147483647"},
		{"tenant=a", `tenant "a": neither uids nor gids`},
		{"uids=1 tenant=" + strings.Repeat("n", 257), "the tenant's name is 257 bytes, want at most 256"},
		{"uids=1 tenant=\xff", "the tenant's name is not UTF-8"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			_, err := storeconfig.ParseNodeTenant(tc.spec)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// Check refuses a tenant twice and a tenant that breaks its rules,
// naming the item.
func TestNodeTenantsChecked(t *testing.T) {
	n := storeconfig.Node{Tenants: []storeconfig.NodeTenant{{Name: "a", UIDs: []uint32{1}}, {Name: "a", GIDs: []uint32{2}}, {Name: "b"}, {Name: "", MaxLentBytes: -1}}}
	errs := n.Check("f")
	require.Len(t, errs, 3)
	assert.Contains(t, errs[0].Error(), `item 1: tenant "a" is listed twice`)
	assert.Contains(t, errs[1].Error(), `item 2: tenant "b": neither uids nor gids`)
	assert.Contains(t, errs[2].Error(), `item 3: tenant "": a negative limit`)
	for _, e := range errs {
		assert.Equal(t, "tenants", e.Key)
	}
}

// FuzzParseNodeTenant: a spec either is refused or reads into a tenant
// that passes the checks and whose String reads back the same tenant.
func FuzzParseNodeTenant(f *testing.F) {
	f.Add("uids=1000,1001 gids=100 max_lent_bytes=8589934592 max_bytes_in_flight=1 max_attempts_in_flight=32 tenant=acme")
	f.Add("tenant=")
	f.Add("gids=0 tenant=a b=c")
	f.Add("uids=1 tenant=\xff")
	f.Fuzz(func(t *testing.T, spec string) {
		got, err := storeconfig.ParseNodeTenant(spec)
		if err != nil {
			return
		}
		require.NoError(t, storeconfig.Node{Tenants: []storeconfig.NodeTenant{got}}.Validate(""))
		again, err := storeconfig.ParseNodeTenant(got.String())
		require.NoError(t, err, "%q", got.String())
		require.Equal(t, got, again)
	})
}
