package doctor

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/patience"
	"github.com/kvshare/kvshare/redisdrv/redistest"
	"github.com/kvshare/kvshare/tools/internal/redisconfig"
)

// On a loopback server whose limits the file expects, every check
// passes, and the probe leaves nothing behind.
func TestRedisServerEveryCheckPasses(t *testing.T) {
	path, s := redisconfig.ForTest(t, redistest.Options{})
	rep := Run(t.Context(), Options{ConfigPath: path, Wait: patience.Wait()})
	for _, f := range rep.Findings {
		t.Logf("%-13s %-4s %s", f.Check, f.Verdict, f.Detail)
	}
	assert.False(t, rep.Failed())
	require.Len(t, rep.Findings, len(redisChecks))
	for i, f := range rep.Findings {
		assert.Equal(t, redisChecks[i], f.Check, "in order")
		assert.Equal(t, OK, f.Verdict, "%s: %s", f.Check, f.Detail)
	}
	f, _ := rep.Find(CheckServer)
	assert.Contains(t, f.Detail, s.Addr()+" answered PING with PONG")
	f, _ = rep.Find(CheckVersion)
	assert.Contains(t, f.Detail, "Redis "+s.Version())

	c, err := s.Client()
	require.NoError(t, err)
	defer c.Close()
	keys, err := c.Do(t.Context(), c.B().Keys().Pattern("*").Build()).AsStrSlice()
	require.NoError(t, err)
	assert.Empty(t, keys, "the probe's key is removed")
}

// Expectations the server does not meet fail, naming both values; a
// server without a limit is a warning when nothing is expected.
func TestRedisServerExpectations(t *testing.T) {
	s := redistest.StartForTest(t, redistest.Options{MaxMemory: 64 << 20, Policy: "allkeys-lru"})
	path := storeFile(t, redisFile(s.Addr(), "maxmemory = 134217728", `maxmemory_policy = "noeviction"`))
	rep := Run(t.Context(), Options{ConfigPath: path, Wait: patience.Wait()})
	v := redisVerdicts(t, rep)
	assert.Equal(t, Fail, v[CheckMaxMemory])
	assert.Equal(t, Fail, v[CheckEviction])
	assert.Equal(t, Skip, v[CheckPut], "no probe after a failure")
	f, _ := rep.Find(CheckMaxMemory)
	assert.Contains(t, f.Detail, "the server has maxmemory 64 MiB")
	assert.Contains(t, f.Detail, "expects at least 128 MiB")
	f, _ = rep.Find(CheckEviction)
	assert.Contains(t, f.Detail, "maxmemory-policy is allkeys-lru")
	assert.Contains(t, f.Detail, "expects noeviction")

	s = redistest.StartForTest(t, redistest.Options{})
	rep = Run(t.Context(), Options{ConfigPath: storeFile(t, redisFile(s.Addr())), Wait: patience.Wait()})
	assert.False(t, rep.Failed())
	v = redisVerdicts(t, rep)
	assert.Equal(t, Warn, v[CheckMaxMemory])
	assert.Equal(t, OK, v[CheckEviction])
	assert.Equal(t, OK, v[CheckClose])
}

// A user who may not run CONFIG: the checks that need it are skipped,
// saying why, and the probe still runs; a wrong password fails the
// server, naming the settings to check.
func TestRedisUserWithoutConfig(t *testing.T) {
	s := redistest.StartForTest(t, redistest.Options{})
	c, err := s.Client()
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Do(t.Context(), c.B().AclSetuser().Username("kv").Rule("on", ">kv-secret", "~*", "+@all", "-config").Build()).Error())

	t.Setenv("KV_DOCTOR_PW", "kv-secret")
	path := storeFile(t, redisFile(s.Addr(), `user = "kv"`, `password_env = "KV_DOCTOR_PW"`))
	rep := Run(t.Context(), Options{ConfigPath: path, Wait: patience.Wait()})
	for _, f := range rep.Findings {
		t.Logf("%-13s %-4s %s", f.Check, f.Verdict, f.Detail)
	}
	assert.False(t, rep.Failed())
	v := redisVerdicts(t, rep)
	for _, check := range []string{CheckMaxMemory, CheckEviction, CheckPersistence} {
		assert.Equal(t, Skip, v[check], check)
		f, _ := rep.Find(check)
		assert.Contains(t, f.Detail, "answered an error (CONFIG renamed or disabled, or this user may not run it)")
		assert.Contains(t, f.Detail, "NOPERM")
	}
	for _, check := range []string{CheckServer, CheckPut, CheckLookup, CheckGet, CheckRemove, CheckClose} {
		assert.Equal(t, OK, v[check], check)
	}

	t.Setenv("KV_DOCTOR_PW", "wrong")
	rep = Run(t.Context(), Options{ConfigPath: path, Wait: patience.Wait()})
	f, _ := rep.Find(CheckServer)
	assert.Equal(t, Fail, f.Verdict)
	assert.Contains(t, f.Detail, "WRONGPASS")
	assert.Contains(t, f.Detail, fmt.Sprintf("check [redis] user and the password in the variable [redis] password_env names, in %s", path))
}
