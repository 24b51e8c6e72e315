package doctor

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/redisdrv"
)

// redisFile is a Redis store file for the server at addr, with extra
// [redis] lines.
func redisFile(addr string, extra ...string) string {
	return "[blob]\nkey_prefix = \"kvshare\"\n\n[redis]\naddress = \"" + addr + "\"\n" + strings.Join(extra, "\n") + "\n"
}

// redisVerdicts is every Redis check's verdict, as Report.Find finds it.
func redisVerdicts(t *testing.T, rep Report) map[string]Verdict {
	t.Helper()
	v := map[string]Verdict{}
	for _, c := range redisChecks {
		f, found := rep.Find(c)
		require.True(t, found, "%s is in the report", c)
		v[c] = f.Verdict
	}
	return v
}

func TestRedisBadConfigIsNamedAndStopsEverything(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"unknown key", redisFile("127.0.0.1:6379", "adress = 1"), "[redis] adress: unknown key"},
		{"no address", "[redis]\nworkers = 2\n", "[redis] address: is required"},
		{"bad policy", redisFile("127.0.0.1:6379", `maxmemory_policy = "lru"`), "[redis] maxmemory_policy: must be one of"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := storeFile(t, c.text)
			rep := Run(t.Context(), Options{ConfigPath: path, LookupEnv: noEnv})
			assert.True(t, rep.Failed())
			require.Len(t, rep.Findings, 2, "the config's line, and one for the rest")
			assert.Equal(t, Fail, rep.Findings[0].Verdict)
			assert.Contains(t, rep.Findings[0].Detail, path)
			assert.Contains(t, rep.Findings[0].Detail, c.want)
			assert.Equal(t, rest(redisChecks[1:], "the config was refused"), rep.Findings[1])
			assert.Contains(t, rep.Findings[1].Detail, "the 12 other checks (key prefix, password, server, version, maxmemory, eviction, persistence, probe put, ")
		})
	}
}

func TestAFileForNoStoreOrBothIsNamed(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"both", "[mooncake]\n[redis]\n", "holds both [mooncake] and [redis]"},
		{"neither", "[blob]\nkey_prefix = \"k\"\n", "holds neither [mooncake]"},
		{"malformed", "[mooncake\n", "malformed TOML"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := storeFile(t, c.text)
			rep := Run(t.Context(), Options{ConfigPath: path, LookupEnv: noEnv})
			require.Len(t, rep.Findings, 1, "no store named: no store's checks follow")
			f := rep.Findings[0]
			assert.Equal(t, CheckConfig, f.Check)
			assert.Equal(t, Fail, f.Verdict)
			assert.Contains(t, f.Detail, path)
			assert.Contains(t, f.Detail, c.want)
			var b bytes.Buffer
			rep.Write(&b)
			assert.Contains(t, b.String(), "doctor: 1 of 1 checks FAILED for "+path)
		})
	}
}

func TestPasswordVariable(t *testing.T) {
	sc := redisdrv.StoreConfig{File: "redis.toml", Redis: redisdrv.RedisConfig{User: "kv", PasswordEnv: "KV_PW"}}
	f := checkPassword(sc, noEnv)
	assert.Equal(t, Fail, f.Verdict)
	assert.Contains(t, f.Detail, "redis.toml: [redis] password_env names KV_PW, which is unset or empty")
	assert.Contains(t, f.Detail, "user kv")

	f = checkPassword(sc, env(map[string]string{"KV_PW": "secret"}))
	assert.Equal(t, OK, f.Verdict)
	assert.Contains(t, f.Detail, "KV_PW is set (6 bytes, not shown)")
	assert.NotContains(t, f.Detail, "secret")

	f = checkPassword(redisdrv.StoreConfig{}, noEnv)
	assert.Equal(t, OK, f.Verdict)
	assert.Contains(t, f.Detail, "without a password")
}

// The server refused: the checks that need it share one line.
func TestRedisServerThatDoesNotAnswer(t *testing.T) {
	addr := closedPort(t)
	path := storeFile(t, redisFile(addr))
	rep := Run(t.Context(), Options{ConfigPath: path, LookupEnv: noEnv})
	assert.True(t, rep.Failed())
	v := redisVerdicts(t, rep)
	assert.Equal(t, OK, v[CheckConfig])
	assert.Equal(t, OK, v[CheckPassword])
	assert.Equal(t, Fail, v[CheckServer])
	for _, c := range redisChecks[4:] {
		assert.Equal(t, Skip, v[c], c)
	}
	f, _ := rep.Find(CheckServer)
	assert.Contains(t, f.Detail, addr)
	assert.Contains(t, f.Detail, "connection refused")
	assert.Contains(t, f.Detail, "is redis-server running there")
	assert.Equal(t, CheckRest, rep.Findings[len(rep.Findings)-1].Check)
	assert.Contains(t, rep.Findings[len(rep.Findings)-1].Detail, "not run: the server did not answer")
}

func TestVersions(t *testing.T) {
	for _, c := range []struct {
		info    map[string]string
		verdict Verdict
		want    string
	}{
		{map[string]string{"redis_version": "7.0.15", "redis_mode": "standalone", "os": "Linux"}, OK, "Redis 7.0.15 (standalone, Linux)"},
		{map[string]string{"redis_version": "7.2.4"}, OK, "Redis 7.2.4"},
		{map[string]string{"redis_version": "6.2.14", "redis_mode": "standalone"}, Fail, "the driver needs 7.0 or later"},
		{map[string]string{"redis_version": "7.0"}, Fail, `no redis_version of the form X.Y.Z (got "7.0")`},
		{map[string]string{}, Fail, "no redis_version"},
		{map[string]string{"redis_version": "7.0.0", "redis_mode": "cluster"}, Warn, "set [redis] cluster = true, with the nodes as addresses"},
		{map[string]string{"redis_version": "7.0.0", "redis_mode": "sentinel"}, Fail, "a sentinel stores nothing"},
	} {
		f := judgeVersion(c.info, false)
		assert.Equal(t, c.verdict, f.Verdict, "%v: %s", c.info, f.Detail)
		assert.Contains(t, f.Detail, c.want)
	}
	// A cluster's file wants every node in cluster mode.
	for _, c := range []struct {
		info    map[string]string
		verdict Verdict
		want    string
	}{
		{map[string]string{"redis_version": "7.0.15", "redis_mode": "cluster", "os": "Linux"}, OK, "Redis 7.0.15 (cluster, Linux)"},
		{map[string]string{"redis_version": "7.0.15", "redis_mode": "standalone"}, Fail, "in standalone mode, not a cluster node: [redis] cluster = true wants the nodes of a Redis Cluster"},
		{map[string]string{"redis_version": "7.0.15"}, Fail, "in an unnamed mode, not a cluster node"},
		{map[string]string{"redis_version": "6.2.14", "redis_mode": "cluster"}, Fail, "the driver needs 7.0 or later"},
	} {
		f := judgeVersion(c.info, true)
		assert.Equal(t, c.verdict, f.Verdict, "%v: %s", c.info, f.Detail)
		assert.Contains(t, f.Detail, c.want)
	}
	info := infoFields("# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n\r\n")
	assert.Equal(t, map[string]string{"redis_version": "7.0.15", "redis_mode": "standalone"}, info)
}

func TestMaxMemoryJudgement(t *testing.T) {
	expect := func(n int64) redisdrv.StoreConfig {
		return redisdrv.StoreConfig{File: "redis.toml", Redis: redisdrv.RedisConfig{MaxMemory: n}}
	}
	for _, c := range []struct {
		name    string
		sc      redisdrv.StoreConfig
		limit   int64
		verdict Verdict
		want    []string
	}{
		{"enough", expect(1 << 30), 2 << 30, OK, []string{"2 GiB (2147483648 bytes), at least the 1 GiB"}},
		{"too little", expect(2 << 30), 1 << 30, Fail, []string{"the server has maxmemory 1 GiB (1073741824 bytes)", "redis.toml: [redis] maxmemory expects at least 2 GiB"}},
		{"no limit, one expected", expect(1 << 30), 0, Fail, []string{"maxmemory 0", "out-of-memory killer", "expects at least 1 GiB"}},
		{"no limit, unchecked", expect(0), 0, Warn, []string{"0 (no limit", "out-of-memory killer", "set maxmemory"}},
		{"a limit, unchecked", expect(0), 1000, OK, []string{"1000 bytes ([redis] maxmemory not set: not checked)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := judgeMaxMemory(c.sc, c.limit)
			assert.Equal(t, CheckMaxMemory, f.Check)
			assert.Equal(t, c.verdict, f.Verdict, f.Detail)
			for _, w := range c.want {
				assert.Contains(t, f.Detail, w)
			}
		})
	}
}

func TestPolicyJudgement(t *testing.T) {
	expect := func(p string) redisdrv.StoreConfig {
		return redisdrv.StoreConfig{File: "redis.toml", Redis: redisdrv.RedisConfig{MaxMemoryPolicy: p}}
	}
	for _, c := range []struct {
		name    string
		sc      redisdrv.StoreConfig
		policy  string
		limit   int64
		verdict Verdict
		want    []string
	}{
		{"expected", expect("noeviction"), "noeviction", 1 << 30, OK, []string{"as [redis] maxmemory_policy expects", "refuses puts (OOM: the rows end Declined)"}},
		{"differs", expect("noeviction"), "allkeys-lru", 1 << 30, Fail, []string{"the server's maxmemory-policy is allkeys-lru", "redis.toml: [redis] maxmemory_policy expects noeviction"}},
		{"evicting, unchecked", expect(""), "allkeys-lru", 1 << 30, Warn, []string{"not checked", "a row whose put was Ready may later read Miss"}},
		{"evicting, chosen", expect("allkeys-lfu"), "allkeys-lfu", 1 << 30, OK, []string{"may later read Miss"}},
		{"evicting, no limit", expect(""), "allkeys-lru", 0, OK, []string{"with maxmemory 0 it never acts"}},
		{"volatile", expect(""), "volatile-lru", 1 << 30, OK, []string{"kvshare sets none: its rows are never evicted"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := judgePolicy(c.sc, c.policy, c.limit)
			assert.Equal(t, CheckEviction, f.Check)
			assert.Equal(t, c.verdict, f.Verdict, f.Detail)
			for _, w := range c.want {
				assert.Contains(t, f.Detail, w)
			}
		})
	}
}

func TestPersistenceText(t *testing.T) {
	f := persistence("", "no")
	assert.Equal(t, OK, f.Verdict)
	assert.Contains(t, f.Detail, "nothing reaches the disk")
	f = persistence("3600 1 300 100", "yes")
	assert.Equal(t, OK, f.Verdict, "persistence never fails")
	assert.Contains(t, f.Detail, `save "3600 1 300 100": each RDB snapshot forks the server`)
	assert.Contains(t, f.Detail, "appendonly yes: the AOF writes every row's bytes")
	assert.NotContains(t, f.Detail, "nothing reaches the disk")
}
