package tomlfile_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/storeconfig"
	"github.com/kvshare/kvshare/storeconfig/tomlfile"
)

// decodeNode decodes a file as kvshare node's reader does: [blob],
// [memory] and [node].
func decodeNode(data string) (storeconfig.Node, error) {
	f := tomlfile.Parse("store.toml", []byte(data), nil)
	f.Blob()
	f.Memory()
	n := f.Node()
	return n, f.Finish()
}

func TestNodeSection(t *testing.T) {
	n, err := decodeNode(`[memory]
capacity = 1048576
[node]
socket = "/run/kvshare/node.sock"
mode = "0660"
allow_uids = [0, 1000]
max_frame = 1048576
max_attempts = 32
max_rows = 4096
max_lend_bytes = 17179869184
max_regions = 64
out_queue = 256
engine_wait = "30s"
shutdown_wait = "2m"
reclaim_above = 1073741824
reclaim_wait = "2m"
require_scope = true
tenants = ["uids=1000 max_lent_bytes=8589934592 max_attempts_in_flight=16 tenant=acme", "gids=100 tenant=big corp", "max_bytes_in_flight=4096 tenant="]
`)
	require.NoError(t, err)
	assert.Equal(t, storeconfig.Node{
		Socket: "/run/kvshare/node.sock", Mode: 0o660, AllowUIDs: []uint32{0, 1000},
		MaxFrame: 1 << 20, MaxAttempts: 32, MaxRows: 4096, MaxLendBytes: 16 << 30, MaxRegions: 64, OutQueue: 256,
		EngineWait: 30 * time.Second, ShutdownWait: 2 * time.Minute, ReclaimAbove: 1 << 30, ReclaimWait: 2 * time.Minute,
		RequireScope: true, Tenants: []storeconfig.NodeTenant{
			{Name: "acme", UIDs: []uint32{1000}, MaxLentBytes: 8 << 30, MaxAttemptsInFlight: 16},
			{Name: "big corp", GIDs: []uint32{100}},
			{Name: "", MaxBytesInFlight: 4096},
		},
	}, n)

	n, err = decodeNode("[node]\n")
	require.NoError(t, err)
	assert.Equal(t, storeconfig.Node{}, n, "an empty section: every default")

	f := tomlfile.Parse("store.toml", []byte("[blob]\n"), nil)
	assert.False(t, f.Has(storeconfig.NodeSection))
	assert.Equal(t, storeconfig.Node{}, f.Node(), "no section: the zero Node")
	assert.NoError(t, f.Finish())
}

func TestNodeRefusalsNameSectionAndKey(t *testing.T) {
	for _, tc := range []struct {
		name, file, key, want string
	}{
		{"a socket of the wrong type", "[node]\nsocket = 3\n", "socket", "wants a string, got an integer (3)"},
		{"a relative socket", "[node]\nsocket = \"node.sock\"\n", "socket", "must be an absolute path"},
		{"a mode as a number", "[node]\nmode = 660\n", "mode", "wants a string, got an integer (660)"},
		{"a mode not in octal", "[node]\nmode = \"rw-rw----\"\n", "mode", `wants permission bits in octal from "0001" to "0777", such as "0660", got "rw-rw----"`},
		{"a mode of 0", "[node]\nmode = \"0\"\n", "mode", `got "0"`},
		{"a mode with the sticky bit", "[node]\nmode = \"01777\"\n", "mode", `got "01777"`},
		{"uids as a string", "[node]\nallow_uids = \"1000\"\n", "allow_uids", "wants an array of integers, got a string"},
		{"uids holding a name", "[node]\nallow_uids = [1000, \"bob\"]\n", "allow_uids", "item 1 is string (bob)"},
		{"a negative uid", "[node]\nallow_uids = [-1]\n", "allow_uids", "item 0 is -1, not a user id"},
		{"a uid beyond 32 bits", "[node]\nallow_uids = [4294967296]\n", "allow_uids", "item 0 is 4294967296"},
		{"no uids", "[node]\nallow_uids = []\n", "allow_uids", "is empty: leave it out"},
		{"a frame as a float", "[node]\nmax_frame = 1048576.0\n", "max_frame", "wants an integer, got a float"},
		{"a frame below the largest hello", "[node]\nmax_frame = 4096\n", "max_frame", "must be between 65605 and 1073741824, got 4096"},
		{"attempts of 0", "[node]\nmax_attempts = 0\n", "max_attempts", "is 0: leave it out for the node's default"},
		{"negative rows", "[node]\nmax_rows = -5\n", "max_rows", "must be between 1 and 1048576, got -5"},
		{"lent bytes as a size string", "[node]\nmax_lend_bytes = \"16GiB\"\n", "max_lend_bytes", "wants an integer, got a string (16GiB)"},
		{"regions beyond int32", "[node]\nmax_regions = 9223372036854775807\n", "max_regions", "must be between 1 and 65536"},
		{"an out queue of 0", "[node]\nout_queue = 0\n", "out_queue", "is 0"},
		{"an engine wait as a number", "[node]\nengine_wait = 10\n", "engine_wait", "wants a string, got an integer"},
		{"an engine wait without a unit", "[node]\nengine_wait = \"10\"\n", "engine_wait", `wants a positive Go duration such as "10s", got "10"`},
		{"a negative shutdown wait", "[node]\nshutdown_wait = \"-1s\"\n", "shutdown_wait", `got "-1s"`},
		{"a shutdown wait beyond a day", "[node]\nshutdown_wait = \"48h\"\n", "shutdown_wait", "must be from 1ms to 24h0m0s, got 48h0m0s"},
		{"a reclaim threshold of 0", "[node]\nreclaim_above = 0\n", "reclaim_above", "is 0: leave it out"},
		{"a reclaim wait as a number", "[node]\nreclaim_wait = 90\n", "reclaim_wait", "wants a string, got an integer"},
		{"require_scope as a string", "[node]\nrequire_scope = \"yes\"\n", "require_scope", "wants a boolean, got a string"},
		{"tenants as a string", "[node]\ntenants = \"tenant=a\"\n", "tenants", "wants an array of strings, got a string"},
		{"a tenant spec without its name", "[node]\ntenants = [\"uids=1\"]\n", "tenants", `item 0: "uids=1": no tenant=NAME`},
		{"a tenant nobody may declare", "[node]\ntenants = [\"tenant=a\"]\n", "tenants", `item 0: "tenant=a": tenant "a": neither uids nor gids`},
		{"a tenant limit of 0", "[node]\ntenants = [\"uids=1 max_lent_bytes=0 tenant=a\"]\n", "tenants", `max_lent_bytes: "0": want an integer from 1`},
		{"a tenant twice", "[node]\ntenants = [\"uids=1 tenant=a\", \"gids=2 tenant=a\"]\n", "tenants", `item 1: tenant "a" is listed twice`},
		{"an unknown key", "[node]\nsocket_path = \"/run/x\"\n", "socket_path", "unknown key (known: socket, mode, allow_uids, max_frame"},
		{"a key in another case", "[node]\nSocket = \"/run/x\"\n", "Socket", "unknown key"},
		{"a table for a value", "[node.socket]\npath = \"/run/x\"\n", "socket", "wants a string, got a table"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeNode(tc.file)
			require.ErrorIs(t, err, storeconfig.ErrConfig)
			var e *storeconfig.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "store.toml", e.File)
			assert.Equal(t, "node", e.Section)
			assert.Equal(t, tc.key, e.Key)
			assert.Contains(t, e.Error(), tc.want)
		})
	}
	_, err := decodeNode("node = 3\n")
	assert.ErrorContains(t, err, "[node]: must be a table, got an integer")
}

// Every reader knows [node]: one that decodes only its own section
// (here [store]) accepts a good [node] beside it and refuses a bad one,
// naming the key, when it finishes.
func TestEveryReaderChecksNode(t *testing.T) {
	_, _, err := decode("[store]\naddr = \"x:1\"\n[node]\nsocket = \"/run/kvshare/node.sock\"\nmode = \"0660\"\n")
	require.NoError(t, err)
	_, _, err = decode("[store]\naddr = \"x:1\"\n[node]\nmode = \"0999\"\n")
	var e *storeconfig.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "node", e.Section)
	assert.Equal(t, "mode", e.Key)
	_, _, err = decode("[store]\naddr = \"x:1\"\n[node]\nmax_rows = 0\n")
	assert.ErrorContains(t, err, "[node] max_rows: is 0")
}

// FuzzNode decodes any file as kvshare node's reader: a file accepted
// gives settings that validate; a refusal names the file.
func FuzzNode(f *testing.F) {
	f.Add("[node]\nsocket = \"/run/kvshare/node.sock\"\nmode = \"0660\"\nallow_uids = [0, 1000]\nmax_frame = 65605\nengine_wait = \"1ms\"\n")
	f.Add("[node]\n")
	f.Add("[node]\nmax_lend_bytes = 9223372036854775807\nout_queue = -1\n")
	f.Add("[node]\nallow_uids = [1.5]\n")
	f.Add("[node.mode]\nx = 1\n")
	f.Add("node = 3\n")
	f.Fuzz(func(t *testing.T, data string) {
		n, err := decodeNode(data)
		if err != nil {
			var e *storeconfig.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, "store.toml", e.File)
			return
		}
		require.NoError(t, n.Validate(""), "accepted settings validate: %+v", n)
	})
}

// SectionErr gives one section's refusals, and the file's own, not the
// unknown sections Finish would refuse.
func TestSectionErr(t *testing.T) {
	f := tomlfile.Parse("store.toml", []byte("[node]\nmode = \"9\"\n[mooncake]\nmaster = 1\n"), nil)
	f.Node()
	err := f.SectionErr(storeconfig.NodeSection)
	var e *storeconfig.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "mode", e.Key)
	assert.NotContains(t, err.Error(), "mooncake")
	assert.ErrorContains(t, f.Finish(), "[mooncake]: unknown section")

	f = tomlfile.Parse("store.toml", []byte("[node\n"), nil)
	f.Node()
	assert.ErrorContains(t, f.SectionErr(storeconfig.NodeSection), "malformed TOML")
	f = tomlfile.Parse("store.toml", []byte("[node]\nsocket = \"/run/x.sock\"\n[mooncake]\n"), nil)
	f.Node()
	assert.NoError(t, f.SectionErr(storeconfig.NodeSection))
}
