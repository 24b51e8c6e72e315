package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/redisdrv/redistest"
	"github.com/kvshare/kvshare/tools/internal/bench"
	"github.com/kvshare/kvshare/tools/internal/redisconfig"
)

// writeStore writes a store file into a temporary folder of t.
func writeStore(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "store.toml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

// mooncakeFile is a [mooncake] store file (naming no running pool).
func mooncakeFile(t *testing.T) string {
	return writeStore(t, "[mooncake]\nmaster = \"127.0.0.1:1\"\nmetadata_server = \"P2PHANDSHAKE\"\nprotocol = \"tcp\"\nlocal_hostname = \"127.0.0.1\"\n")
}

// redisFile is a [redis] store file for addr.
func redisFile(t *testing.T, addr string) string {
	return writeStore(t, "[redis]\naddress = \""+addr+"\"\n")
}

func TestBenchStoresTakeEachFileForItsStore(t *testing.T) {
	mooncake, redis := mooncakeFile(t), redisFile(t, "127.0.0.1:1")
	disk := writeStore(t, "[disk]\ndir = \"/kv\"\ncapacity = 0\n")
	for _, c := range []struct {
		name                      string
		store, dir, server        string
		pool, poolDir, redisStore string
		redisServer, disk, err    string
	}{
		{name: "nothing"},
		{name: "a Mooncake file", store: mooncake, pool: mooncake},
		{name: "a Redis file", store: redis, redisStore: redis},
		{name: "a Redis file and a Mooncake folder", store: redis, dir: "/m", redisStore: redis, poolDir: "/m"},
		{name: "a Mooncake file and a redis-server", store: mooncake, server: "redis-server", pool: mooncake, redisServer: "redis-server"},
		{name: "a Mooncake folder and a redis-server", dir: "/m", server: "/r", poolDir: "/m", redisServer: "/r"},
		{name: "a Redis file and a redis-server", store: redis, server: "/r", err: "--store (a [redis] file) and --redis-server are two ways to name a Redis server: give one"},
		{name: "a file of both", store: writeStore(t, "[mooncake]\n[redis]\n"), err: "holds both [mooncake] and [redis]"},
		{name: "a file of neither", store: writeStore(t, "[blob]\n"), err: "holds neither"},
		{name: "a [memory] file", store: writeStore(t, "[memory]\ncapacity = 1048576\n"), err: "a [memory] file shapes the embedded store"},
		{name: "a [disk] file", store: disk, disk: disk},
		{name: "a [disk] file and a redis-server", store: disk, server: "/r", disk: disk, redisServer: "/r"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := bench.Defaults()
			err := benchStores(&o, c.store, c.dir, c.server)
			if c.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.pool, o.Pool.StorePath)
			assert.Equal(t, c.poolDir, o.Pool.MooncakeDir)
			assert.Equal(t, c.redisStore, o.Redis.StorePath)
			assert.Equal(t, c.redisServer, o.Redis.Server)
			assert.Equal(t, c.disk, o.Disk.StorePath)
		})
	}
}

func TestStoreFlagsNamedTwice(t *testing.T) {
	for _, c := range []struct {
		flags storeFlags
		want  string
	}{
		{storeFlags{}, ""},
		{storeFlags{store: "a"}, ""},
		{storeFlags{redisServer: "r"}, ""},
		{storeFlags{store: "a", mooncakeDir: "m"}, "--store and --mooncake-dir are two ways to name a pool: give one"},
		{storeFlags{store: "a", redisServer: "r"}, "--store and --redis-server are two ways to name a store: give one"},
		{storeFlags{mooncakeDir: "m", redisServer: "r"}, "--mooncake-dir and --redis-server are two ways to name a store: give one"},
		{storeFlags{store: "a", mooncakeDir: "m", redisServer: "r"}, "--store, --mooncake-dir and --redis-server are three ways to name a store: give one"},
	} {
		assert.Equal(t, c.want, c.flags.twice(), "%+v", c.flags)
	}
}

func TestRedisClusterFlagWantsAServerToStartFrom(t *testing.T) {
	for _, c := range []struct {
		flags storeFlags
		want  string
	}{
		{storeFlags{redisServer: "r", redisCluster: true}, ""},
		{storeFlags{redisCluster: true}, "--redis-cluster starts a loopback cluster from a redis-server binary: give --redis-server BINARY with it"},
		{storeFlags{store: "a", redisCluster: true}, "--redis-cluster starts a loopback cluster from --redis-server BINARY, not given here; a store file names a cluster itself ([redis] cluster = true)"},
		{storeFlags{mooncakeDir: "m", redisCluster: true}, "--redis-cluster starts a loopback cluster"},
		{storeFlags{store: "a", redisServer: "r", redisCluster: true}, "--store and --redis-server are two ways to name a store: give one"},
	} {
		assert.Contains(t, c.flags.refused(), c.want, "%+v", c.flags)
		if c.want == "" {
			assert.Empty(t, c.flags.refused(), "%+v", c.flags)
		}
	}
}

func TestRedisUsageErrors(t *testing.T) {
	redis := redisFile(t, "127.0.0.1:1")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"roundtrip", "--store", redis, "--redis-server", "/r"}, "--store and --redis-server are two ways to name a store: give one"},
		{[]string{"roundtrip", "--mooncake-dir", "/m", "--redis-server", "/r"}, "--mooncake-dir and --redis-server are two ways"},
		{[]string{"roundtrip", "--redis-server", "/r", "-workers", "3"}, "with --redis-server each driver runs [redis] workers' default, 4"},
		{[]string{"roundtrip", "--store", redis, "-workers", "3"}, "with --store, set [redis] workers in the store config"},
		{[]string{"roundtrip", "--store", writeStore(t, "[redis]\naddress = \"nowhere\"\n")}, "[redis] address: must be host:port"},
		{[]string{"roundtrip", "--store", writeStore(t, "[mooncake]\n[redis]\n")}, "holds both [mooncake] and [redis]"},
		{[]string{"soak", "--store", redis, "--redis-server", "/r"}, "give one"},
		{[]string{"soak", "--store", writeStore(t, "[blob]\n")}, "holds neither [mooncake]"},
		{[]string{"doctor", "--store", redis, "--redis-server", "/r"}, "--store and --redis-server are two ways to name a store: give one"},
		{[]string{"doctor", "--mooncake-dir", "/m"}, "flag provided but not defined: -mooncake-dir"},
		{[]string{"doctor", "--redis-cluster"}, "give --redis-server BINARY with it"},
		{[]string{"doctor", "--store", redis, "--redis-cluster"}, "a store file names a cluster itself ([redis] cluster = true)"},
		{[]string{"roundtrip", "--redis-cluster"}, "give --redis-server BINARY with it"},
		{[]string{"soak", "--store", redis, "--redis-cluster"}, "a store file names a cluster itself"},
		{[]string{"bench", "--redis-cluster"}, "give --redis-server BINARY with it"},
		{[]string{"bench", "--store", redis, "--redis-cluster"}, "a store file names a cluster itself"},
	} {
		var out, errs bytes.Buffer
		assert.Equal(t, 2, run(c.args, &out, &errs), "%v", c.args)
		assert.Contains(t, errs.String(), c.msg, "%v", c.args)
		assert.Empty(t, out.String(), "%v: nothing ran", c.args)
	}
}

// A redis-server that is not there is named, and nothing ran.
func TestRedisServerNotThere(t *testing.T) {
	for _, cmd := range []string{"roundtrip", "soak", "doctor"} {
		for _, cluster := range [][]string{nil, {"--redis-cluster"}} {
			var out, errs bytes.Buffer
			args := append([]string{cmd, "--redis-server", "/nonexistent/redis-server"}, cluster...)
			assert.Equal(t, 1, run(args, &out, &errs), "%v", args)
			assert.Contains(t, errs.String(), "/nonexistent/redis-server", "%v", args)
			assert.Empty(t, out.String(), "%v", args)
		}
	}
}

func TestDoctorOfARedisServerThatDoesNotAnswer(t *testing.T) {
	path := redisFile(t, "127.0.0.1:1")
	var out, errs bytes.Buffer
	assert.Equal(t, 1, run([]string{"doctor", "--store", path, "--wait", "2s"}, &out, &errs))
	s := out.String()
	assert.Contains(t, s, "kvshare doctor: "+path+"\n")
	assert.Contains(t, s, "server         FAIL  127.0.0.1:1: connecting: ")
	assert.Contains(t, s, "the rest       skip  the 9 other checks (version, maxmemory, eviction, persistence, probe put, probe lookup, probe get, probe remove, client close): not run: the server did not answer")
	assert.Contains(t, s, "doctor: 1 of 13 checks FAILED for "+path)
}

func TestBenchWithoutARedisServerSaysItSkippedSeven(t *testing.T) {
	var out, errs bytes.Buffer
	assert.Equal(t, 0, run([]string{"bench", "--only", "7"}, &out, &errs), "stderr: %s", errs.String())
	assert.Contains(t, out.String(), "7. Redis: skipped: no Redis server given (--store redis.toml, or --redis-server PATH to start one)\n")
}

// The commands over a loopback server they start: the doctor, the round
// trip, the soak and the benchmark's measurement 7.
func TestRedisServerCommands(t *testing.T) {
	binary := redistest.Require(t)

	var out, errs bytes.Buffer
	code := run([]string{"doctor", "--redis-server", binary}, &out, &errs)
	t.Logf("kvshare doctor --redis-server %s\n%s", binary, out.String())
	assert.Equal(t, 0, code, "stderr: %s", errs.String())
	assert.Regexp(t, `^kvshare doctor: \S+/redis\.toml \(a loopback redis-server \d+\.\d+\.\d+ started from `+binary+`\)\n`, out.String())
	assert.Contains(t, out.String(), "doctor: every check passed for ")
	assert.NotContains(t, out.String(), "FAIL")

	out.Reset()
	errs.Reset()
	code = run([]string{"roundtrip", "--redis-server", binary, "-rows", "256", "-row-kib", "64", "-view-rows", "32"}, &out, &errs)
	t.Logf("kvshare roundtrip --redis-server %s\n%s", binary, out.String())
	assert.Equal(t, 0, code, "stderr: %s", errs.String())
	s := out.String()
	assert.Regexp(t, `256 blocks of 64 KiB through the Redis server of \S+/redis\.toml at 127\.0\.0\.1:\d+ \(8 views, 4 workers per driver\)`, s)
	assert.Contains(t, s, "server   a loopback redis-server ")
	assert.Contains(t, s, "keys     kvshare/roundtrip/")
	assert.Contains(t, s, "publish  256 ready")
	assert.Contains(t, s, "lookup   256 present of 256 asked, bound 256 (8 lookups in ")
	assert.Contains(t, s, "fetch    256 ready")
	assert.Contains(t, s, "check    256/256 rows byte-identical")
	assert.Contains(t, s, "lent     0 rows, 0 B left after quiescence; both regions returned to their lenders")

	out.Reset()
	errs.Reset()
	code = run([]string{"soak", "--redis-server", binary, "-duration", "2s", "-lenders", "2"}, &out, &errs)
	assert.Equal(t, 0, code, "stderr: %s", errs.String())
	assert.Contains(t, out.String(), "2 lenders over the Redis server of ")
	assert.Contains(t, out.String(), "byte for byte")
	assert.Contains(t, out.String(), "2 regions freed")

	out.Reset()
	errs.Reset()
	code = run([]string{"bench", "--short", "--reps", "1", "--only", "7", "--redis-server", binary}, &out, &errs)
	t.Logf("kvshare bench --only 7 --redis-server %s\n%s", binary, out.String())
	require.Equal(t, 0, code, "stderr: %s", errs.String())
	s = out.String()
	assert.Contains(t, s, "\n7. Redis: a loopback redis-server ")
	for _, row := range []string{"   64 KiB ", "   256 KiB ", "   1 MiB ", "   4 MiB "} {
		assert.Contains(t, s, row)
	}
	assert.Contains(t, s, "Goals: ")
	assert.Contains(t, s, "4 MiB rows over Redis: get MB/s / the same commands pipelined")
	assert.Contains(t, s, "\n   Cluster beside: kvshare over a loopback Redis Cluster of 3 nodes")
	assert.Contains(t, s, "put cluster/one node")
}

// The commands over a server a store file names.
func TestRedisStoreFileCommands(t *testing.T) {
	path, s := redisconfig.ForTest(t, redistest.Options{})
	var out, errs bytes.Buffer
	code := run([]string{"roundtrip", "--store", path, "-rows", "64", "-row-kib", "16"}, &out, &errs)
	assert.Equal(t, 0, code, "stderr: %s", errs.String())
	assert.Contains(t, out.String(), "64 blocks of 16 KiB through the Redis server of "+path+" at "+s.Addr())
	assert.Contains(t, out.String(), "keys     kvshare-test/roundtrip/")
	assert.Contains(t, out.String(), "check    64/64 rows byte-identical")

	out.Reset()
	errs.Reset()
	code = run([]string{"doctor", "--store", path}, &out, &errs)
	assert.Equal(t, 0, code, "stderr: %s\n%s", errs.String(), out.String())
	assert.Contains(t, out.String(), "doctor: every check passed for "+path)
}

// The doctor and the soak over a loopback cluster they start.
func TestRedisClusterCommands(t *testing.T) {
	binary := redistest.Require(t)

	var out, errs bytes.Buffer
	code := run([]string{"doctor", "--redis-server", binary, "--redis-cluster"}, &out, &errs)
	t.Logf("kvshare doctor --redis-server %s --redis-cluster\n%s", binary, out.String())
	assert.Equal(t, 0, code, "stderr: %s", errs.String())
	assert.Regexp(t, `^kvshare doctor: \S+/cluster\.toml \(a loopback Redis Cluster of 3 nodes, redis-server \d+\.\d+\.\d+ started from `+binary+`\)\n`, out.String())
	assert.Contains(t, out.String(), "\nnodes          ok    all 3 nodes answered")
	assert.Contains(t, out.String(), "doctor: every check passed for ")

	out.Reset()
	errs.Reset()
	code = run([]string{"soak", "--redis-server", binary, "--redis-cluster", "-duration", "2s", "-lenders", "2"}, &out, &errs)
	assert.Equal(t, 0, code, "stderr: %s", errs.String())
	assert.Regexp(t, `2 lenders over the Redis Cluster of \S+/cluster\.toml \(seeds 127\.0\.0\.1:\d+, 127\.0\.0\.1:\d+, 127\.0\.0\.1:\d+\) \(a loopback Redis Cluster of 3 nodes`, out.String())
	assert.Contains(t, out.String(), "byte for byte")
	assert.Contains(t, out.String(), "2 regions freed")
}

// The commands over a cluster a store file names.
func TestRedisClusterStoreFileCommands(t *testing.T) {
	path, c := redisconfig.ClusterForTest(t, redistest.ClusterOptions{})
	var out, errs bytes.Buffer
	code := run([]string{"roundtrip", "--store", path, "-rows", "96", "-row-kib", "16"}, &out, &errs)
	assert.Equal(t, 0, code, "stderr: %s", errs.String())
	assert.Contains(t, out.String(), "96 blocks of 16 KiB through the Redis Cluster of "+path+" (seeds "+strings.Join(c.Addrs(), ", ")+")")
	assert.Contains(t, out.String(), "check    96/96 rows byte-identical")

	out.Reset()
	errs.Reset()
	code = run([]string{"soak", "--store", path, "-duration", "2s", "-lenders", "2"}, &out, &errs)
	assert.Equal(t, 0, code, "stderr: %s", errs.String())
	assert.Contains(t, out.String(), "2 lenders over the Redis Cluster of "+path)
	assert.Contains(t, out.String(), "2 regions freed")

	out.Reset()
	errs.Reset()
	code = run([]string{"doctor", "--store", path}, &out, &errs)
	assert.Equal(t, 0, code, "stderr: %s\n%s", errs.String(), out.String())
	assert.Contains(t, out.String(), "doctor: every check passed for "+path)
}

func TestUsageListsTheStoreFlags(t *testing.T) {
	var out, errs bytes.Buffer
	assert.Equal(t, 0, run([]string{"help"}, &out, &errs))
	for _, want := range []string{"--store store.toml", "--mooncake-dir DIR", "--redis-server PATH", "--redis-cluster", "a Redis server (7)"} {
		assert.Contains(t, out.String(), want)
	}
	for _, cmd := range []string{"roundtrip", "doctor", "bench", "soak"} {
		out.Reset()
		errs.Reset()
		assert.Equal(t, 0, run([]string{cmd, "-h"}, &out, &errs), cmd)
		assert.Contains(t, errs.String(), "-redis-server", cmd)
		assert.Contains(t, errs.String(), "-redis-cluster", cmd)
	}
}
