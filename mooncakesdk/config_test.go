package mooncakesdk

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goodMooncake is the smallest [mooncake] section a config may have.
const goodMooncake = `
[mooncake]
master = "127.0.0.1:50051"
metadata_server = "P2PHANDSHAKE"
local_hostname = "127.0.0.1"
`

func TestLoadStoreConfigReadsTheExample(t *testing.T) {
	cfg, err := LoadStoreConfig(filepath.Join("testdata", "store.toml"))
	require.NoError(t, err)

	assert.Equal(t, filepath.Join("testdata", "store.toml"), cfg.File)
	assert.Equal(t, BlobConfig{KeyPrefix: "kv/llama-3-8b"}, cfg.Blob)
	assert.Equal(t, MooncakeConfig{
		Library:           "/opt/mooncake/lib/libmooncake_store.so",
		SDKSHA256:         []string{"9f2c4a8e1b7d3f6a0c5e8b2d4f7a1c3e6b9d0f2a4c7e1b3d5f8a0c2e4b6d8f1a"},
		Master:            "127.0.0.1:50051",
		MetadataServer:    "http://127.0.0.1:8080/metadata",
		Protocol:          "tcp",
		LocalHostname:     "127.0.0.1",
		GlobalSegmentSize: 0,
		LocalBufferSize:   16 << 20,
		Workers:           4,
		RowsPerCall:       256,
		BytesPerCall:      128 << 20,
		CallsInFlight:     1,
		Replicas:          1,
	}, cfg.Mooncake)
	assert.NoError(t, cfg.Validate())
}

func TestParseStoreConfigDefaults(t *testing.T) {
	cfg, err := ParseStoreConfig("min.toml", []byte(goodMooncake))
	require.NoError(t, err)

	assert.Equal(t, BlobConfig{}, cfg.Blob, "no blob caps unless given")
	m := cfg.Mooncake
	assert.Equal(t, DefaultProtocol, m.Protocol)
	assert.Equal(t, DefaultWorkers, m.Workers)
	assert.Equal(t, DefaultRowsPerCall, m.RowsPerCall)
	assert.Equal(t, int64(DefaultBytesPerCall), m.BytesPerCall)
	assert.Equal(t, DefaultCallsInFlight, m.CallsInFlight)
	assert.Equal(t, DefaultReplicas, m.Replicas)
	assert.False(t, m.SoftPin)
	assert.Empty(t, m.PreferredSegments)
	assert.Empty(t, m.Library)
	assert.Empty(t, m.SDKSHA256)
	assert.Empty(t, m.DeviceName())
}

func TestParseStoreConfigTakesEveryKey(t *testing.T) {
	cfg, err := ParseStoreConfig("all.toml", []byte(`
[blob]
key_prefix = "p"
rows_per_call = 64
bytes_per_call = 1048576
[mooncake]
library = "/lib/libmooncake_store.so"
sdk_sha256 = ["`+strings.Repeat("AB", 32)+`"]
master = "[::1]:50051"
metadata_server = "http://m:8080/metadata"
protocol = "rdma"
devices = ["mlx5_0", "mlx5_1"]
local_hostname = "node7:13000"
global_segment_size = 4294967296
local_buffer_size = 0
workers = 2
rows_per_call = 32
bytes_per_call = 8388608
calls_in_flight = 0
replicas = 3
soft_pin = true
preferred_segments = ["10.0.0.1:13000", "10.0.0.2:13000"]
`))
	require.NoError(t, err)
	assert.Equal(t, BlobConfig{KeyPrefix: "p", RowsPerCall: 64, BytesPerCall: 1 << 20}, cfg.Blob)
	assert.Equal(t, MooncakeConfig{
		Library:           "/lib/libmooncake_store.so",
		SDKSHA256:         []string{strings.Repeat("ab", 32)},
		Master:            "[::1]:50051",
		MetadataServer:    "http://m:8080/metadata",
		Protocol:          "rdma",
		Devices:           []string{"mlx5_0", "mlx5_1"},
		LocalHostname:     "node7:13000",
		GlobalSegmentSize: 4 << 30,
		Workers:           2,
		RowsPerCall:       32,
		BytesPerCall:      8 << 20,
		CallsInFlight:     0,
		Replicas:          3,
		SoftPin:           true,
		PreferredSegments: []string{"10.0.0.1:13000", "10.0.0.2:13000"},
	}, cfg.Mooncake)
	assert.Equal(t, "mlx5_0,mlx5_1", cfg.Mooncake.DeviceName())
}

// TestParseStoreConfigRefuses: each bad config is refused with the file,
// section and key named, in the ConfigError and in its text.
func TestParseStoreConfigRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		toml    string
		section string
		key     string
		reason  string
	}{
		{"unknown section", goodMooncake + "[store]\nx = 1\n", "store", "", "unknown section"},
		{"unknown key in blob", "[blob]\nprefix = \"a\"\n" + goodMooncake, "blob", "prefix", "unknown key"},
		{"unknown key in mooncake", goodMooncake + "replica_count = 2\n", "mooncake", "replica_count", "unknown key"},
		{"key outside every section", "workers = 4\n" + goodMooncake, "", "workers", "unknown key"},
		{"key spelled in another case", goodMooncake + "Workers = 4\n", "mooncake", "Workers", "unknown key"},
		{"section spelled in another case", "[Blob]\nkey_prefix = \"a\"\n" + goodMooncake, "Blob", "", "unknown section"},
		{"sub-table in a known section", goodMooncake + "[mooncake.extra]\na = 1\n", "mooncake", "extra", "unknown key"},
		{"float for an int", goodMooncake + "bytes_per_call = 1.28e+8\n", "mooncake", "bytes_per_call", "wants an integer, got a float (1.28e+08)"},
		{"string for an int", goodMooncake + "workers = \"4\"\n", "mooncake", "workers", "wants an integer, got a string"},
		{"int for a string", goodMooncake + "protocol = 1\n", "mooncake", "protocol", "wants a string, got an integer"},
		{"string for a list", goodMooncake + "devices = \"mlx5_0\"\n", "mooncake", "devices", "wants an array of strings, got a string"},
		{"list of ints for a list of strings", goodMooncake + "sdk_sha256 = [1, 2]\n", "mooncake", "sdk_sha256", "wants an array of strings"},
		{"table for an int", goodMooncake + "[mooncake.workers]\nn = 4\n", "mooncake", "workers", "wants an integer, got a table"},
		{"section that is not a table", "blob = 3\n" + goodMooncake, "blob", "", "must be a table, got an integer"},
		{"mooncake not a table", "mooncake = \"127.0.0.1:50051\"\n", "mooncake", "", "must be a table, got a string"},
		{"array of tables for a section", "[[blob]]\nkey_prefix = \"a\"\n" + goodMooncake, "blob", "", "must be a table, got an array of tables"},
		{"HA master array", strings.Replace(goodMooncake, `"127.0.0.1:50051"`, `["10.0.0.1:50051", "10.0.0.2:50051"]`, 1), "mooncake", "master", "HA master list"},
		{"HA master comma list", strings.Replace(goodMooncake, `"127.0.0.1:50051"`, `"10.0.0.1:50051,10.0.0.2:50051"`, 1), "mooncake", "master", "HA master list"},
		{"master as a URL", strings.Replace(goodMooncake, `"127.0.0.1:50051"`, `"etcd://10.0.0.1:2379"`, 1), "mooncake", "master", "not a URL"},
		{"master without a port", strings.Replace(goodMooncake, `"127.0.0.1:50051"`, `"127.0.0.1"`, 1), "mooncake", "master", "host:port"},
		{"master port out of range", strings.Replace(goodMooncake, `"127.0.0.1:50051"`, `"127.0.0.1:70000"`, 1), "mooncake", "master", "port between 1 and 65535"},
		{"master missing", "[mooncake]\nmetadata_server = \"x\"\nlocal_hostname = \"h\"\n", "mooncake", "master", "is required"},
		{"no mooncake section", "[blob]\nkey_prefix = \"a\"\n", "mooncake", "master", "is required"},
		{"metadata server missing", "[mooncake]\nmaster = \"h:1\"\nlocal_hostname = \"h\"\n", "mooncake", "metadata_server", "is required"},
		{"local hostname empty", strings.Replace(goodMooncake, `local_hostname = "127.0.0.1"`, `local_hostname = ""`, 1), "mooncake", "local_hostname", "is required"},
		{"unknown protocol", goodMooncake + "protocol = \"udp\"\n", "mooncake", "protocol", `must be "tcp" or "rdma"`},
		{"workers negative", goodMooncake + "workers = -1\n", "mooncake", "workers", "between 0 (the default, 4) and 1024, got -1"},
		{"workers too many", goodMooncake + "workers = 5000\n", "mooncake", "workers", "and 1024, got 5000"},
		{"rows per call negative", goodMooncake + "rows_per_call = -1\n", "mooncake", "rows_per_call", "between 0 (the default, 256) and 65536"},
		{"bytes per call negative", goodMooncake + "bytes_per_call = -1\n", "mooncake", "bytes_per_call", "got -1"},
		{"calls in flight negative", goodMooncake + "calls_in_flight = -1\n", "mooncake", "calls_in_flight", "between 0 and 1024, got -1"},
		{"replicas negative", goodMooncake + "replicas = -1\n", "mooncake", "replicas", "between 0 (the default, 1) and 64, got -1"},
		{"replicas too many", goodMooncake + "replicas = 65\n", "mooncake", "replicas", "and 64, got 65"},
		{"replicas a string", goodMooncake + "replicas = \"2\"\n", "mooncake", "replicas", "wants an integer"},
		{"soft pin not a bool", goodMooncake + "soft_pin = 1\n", "mooncake", "soft_pin", "wants a boolean"},
		{"preferred segments not a list", goodMooncake + "preferred_segments = \"a:1\"\n", "mooncake", "preferred_segments", "wants an array of strings"},
		{"preferred segment empty", goodMooncake + "preferred_segments = [\"a:1\", \"\"]\n", "mooncake", "preferred_segments", "item 1 (\"\") is not a segment name"},
		{"preferred segment with a comma", goodMooncake + "preferred_segments = [\"a:1,b:2\"]\n", "mooncake", "preferred_segments", "item 0"},
		{"calls in flight not an integer", goodMooncake + "calls_in_flight = \"one\"\n", "mooncake", "calls_in_flight", "wants an integer"},
		{"bytes per call too big", goodMooncake + "bytes_per_call = 2199023255552\n", "mooncake", "bytes_per_call", "and 1099511627776"},
		{"negative segment", goodMooncake + "global_segment_size = -1\n", "mooncake", "global_segment_size", "must not be negative"},
		{"negative blob rows", "[blob]\nrows_per_call = -5\n" + goodMooncake, "blob", "rows_per_call", "must be between 0 and 65536, got -5"},
		{"blob bytes too big", "[blob]\nbytes_per_call = 2199023255552\n" + goodMooncake, "blob", "bytes_per_call", "between 0 and"},
		{"hash not hex", goodMooncake + "sdk_sha256 = [\"xyz\"]\n", "mooncake", "sdk_sha256", "not a SHA-256"},
		{"device with a comma", goodMooncake + "devices = [\"mlx5_0,mlx5_1\"]\n", "mooncake", "devices", "not a device name"},
		{"NUL in key prefix", "[blob]\nkey_prefix = \"a\\u0000b\"\n" + goodMooncake, "blob", "key_prefix", "not a usable key prefix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseStoreConfig("bad.toml", []byte(tc.toml))
			require.ErrorIs(t, err, ErrConfig)
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "bad.toml", ce.File)
			assert.Equal(t, tc.section, ce.Section)
			assert.Equal(t, tc.key, ce.Key)
			assert.Contains(t, ce.Reason, tc.reason)
			msg := err.Error()
			assert.Contains(t, msg, "bad.toml")
			if tc.section != "" {
				assert.Contains(t, msg, "["+tc.section+"]")
			}
			if tc.key != "" {
				assert.Contains(t, msg, tc.key)
			}
		})
	}
}

func TestParseStoreConfigReportsEveryFinding(t *testing.T) {
	_, err := ParseStoreConfig("bad.toml", []byte(goodMooncake+"workers = 1.5\nprotocol = 3\nrows_per_call = -1\n[extra]\n"))
	require.ErrorIs(t, err, ErrConfig)
	var keys []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *ConfigError
		require.ErrorAs(t, e, &ce)
		keys = append(keys, ce.Section+"."+ce.Key)
	}
	// Type errors, unknown sections and ranges alike; a refused key is
	// reported once, not again as out of range.
	assert.ElementsMatch(t, []string{"mooncake.workers", "mooncake.protocol", "extra.", "mooncake.rows_per_call"}, keys)
}

func TestParseStoreConfigMalformed(t *testing.T) {
	_, err := ParseStoreConfig("bad.toml", []byte("[mooncake]\nmaster = \"a:1\"\nworkers = = 4\n"))
	require.ErrorIs(t, err, ErrConfig)
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "bad.toml", ce.File)
	assert.Equal(t, 3, ce.Line)
	assert.Positive(t, ce.Column)
	assert.Contains(t, err.Error(), "bad.toml:3:")
	assert.Equal(t, "malformed TOML", ce.Reason)
}

func TestLoadStoreConfigUnreadable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent.toml")
	_, err := LoadStoreConfig(path)
	require.ErrorIs(t, err, ErrConfig)
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), path)

	_, err = LoadStoreConfig(t.TempDir())
	require.ErrorIs(t, err, ErrConfig, "a directory is not a config file")
}

func TestValidateChecksAConfigBuiltInCode(t *testing.T) {
	cfg, err := ParseStoreConfig("ok.toml", []byte(goodMooncake))
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())

	cfg.Mooncake.Master = "a:1,b:2"
	cfg.Mooncake.Protocol = ""
	err = cfg.Validate()
	require.ErrorIs(t, err, ErrConfig)
	assert.Contains(t, err.Error(), "[mooncake] master: an HA master list")
	assert.Contains(t, err.Error(), "[mooncake] protocol")
}

func TestConfigErrorUnwrapsTheParseError(t *testing.T) {
	_, err := ParseStoreConfig("x.toml", []byte("a = [\n"))
	require.ErrorIs(t, err, ErrConfig)
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	var perr toml.ParseError
	require.ErrorAs(t, err, &perr)
	assert.Equal(t, perr.Position.Line, ce.Line)
	assert.Equal(t, perr.Position.Col, ce.Column)
}

func FuzzParseStoreConfig(f *testing.F) {
	example, err := os.ReadFile(filepath.Join("testdata", "store.toml"))
	require.NoError(f, err)
	f.Add(example)
	f.Add([]byte(goodMooncake))
	f.Add([]byte(goodMooncake + "workers = 1.28e+8\n[x]\n"))
	f.Add([]byte("[mooncake]\nmaster = [\"a:1\"]\n[[blob]]\n"))
	f.Add([]byte("[mooncake.workers]\na.b.c = 1\n"))
	f.Add([]byte("x = \"\\u0000\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseStoreConfig("fuzz.toml", data)
		if err != nil {
			require.ErrorIs(t, err, ErrConfig)
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, "fuzz.toml", ce.File)
			return
		}
		// What parses is valid, and its values are in range.
		require.NoError(t, cfg.Validate())
		require.Contains(t, []string{"tcp", "rdma"}, cfg.Mooncake.Protocol)
		require.Empty(t, masterAddrProblem(cfg.Mooncake.Master))
		require.GreaterOrEqual(t, cfg.Mooncake.Workers, 1)
		require.GreaterOrEqual(t, cfg.Blob.RowsPerCall, 0)
	})
}

// A count of 0 in the file means what it means in mooncakedrv.Config:
// the default (the file's settings say so); a config built in code with
// zeros is valid too; a negative count is refused naming the key.
func TestStoreConfigZeroIsTheDefault(t *testing.T) {
	cfg, err := ParseStoreConfig("z.toml", []byte(goodMooncake+"workers = 0\nrows_per_call = 0\nbytes_per_call = 0\nreplicas = 0\n"))
	require.NoError(t, err)
	assert.Equal(t, DefaultWorkers, cfg.Mooncake.Workers)
	assert.Equal(t, DefaultRowsPerCall, cfg.Mooncake.RowsPerCall)
	assert.Equal(t, int64(DefaultBytesPerCall), cfg.Mooncake.BytesPerCall)
	assert.Equal(t, DefaultReplicas, cfg.Mooncake.Replicas)

	cfg.Mooncake.Workers, cfg.Mooncake.RowsPerCall, cfg.Mooncake.BytesPerCall, cfg.Mooncake.Replicas = 0, 0, 0, 0
	require.NoError(t, cfg.Validate())
	for _, key := range []string{"workers", "rows_per_call", "bytes_per_call", "replicas"} {
		_, err := ParseStoreConfig("z.toml", []byte(goodMooncake+key+" = -1\n"))
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, key)
		assert.Equal(t, key, ce.Key)
		assert.Contains(t, ce.Reason, "0 (the default", key)
	}
}
