package redisdrv

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/storeconfig"
)

func TestStoreFileDefaults(t *testing.T) {
	sc, err := ParseStoreConfig("redis.toml", []byte("[redis]\naddress = \"127.0.0.1:6379\"\n"))
	require.NoError(t, err)
	assert.Equal(t, "redis.toml", sc.File)
	assert.Equal(t, RedisConfig{Address: "127.0.0.1:6379", DialTimeout: DefaultDialTimeout, Workers: DefaultWorkers,
		RowsPerCall: DefaultRowsPerCall, BytesPerCall: DefaultBytesPerCall}, sc.Redis)
	assert.Equal(t, storeconfig.Blob{}, sc.Blob, "left out: WithDefaults fills the key prefix")
}

func TestStoreFileEveryKey(t *testing.T) {
	sc, err := ParseStoreConfig("redis.toml", []byte(`
[blob]
key_prefix = "team"
[redis]
address = "redis.internal:6380"
user = "kv"
password_env = "KV_REDIS_PASSWORD"
tls = true
tls_server_name = "redis.example"
db = 3
pool_size = 16
dial_timeout = "750ms"
call_timeout = "30s"
workers = 8
rows_per_call = 32
bytes_per_call = 33554432
maxmemory = 1073741824
maxmemory_policy = "noeviction"
`))
	require.NoError(t, err)
	assert.Equal(t, "team", sc.Blob.KeyPrefix)
	assert.Equal(t, RedisConfig{Address: "redis.internal:6380", User: "kv", PasswordEnv: "KV_REDIS_PASSWORD", TLS: true,
		TLSServerName: "redis.example", DB: 3, PoolSize: 16, DialTimeout: 750 * time.Millisecond, CallTimeout: 30 * time.Second,
		Workers: 8, RowsPerCall: 32, BytesPerCall: 32 << 20, MaxMemory: 1 << 30, MaxMemoryPolicy: "noeviction"}, sc.Redis)
	assert.Equal(t, Config{Workers: 8, RowsPerCall: 32, BytesPerCall: 32 << 20, CallTimeout: 30 * time.Second}, sc.Redis.DriverConfig())
}

// Every refusal names the file, the section and the key, and nothing is
// returned.
func TestStoreFileRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, file, key, says string
	}{
		{"no section", "[blob]\nkey_prefix = \"x\"\n", "", "is required"},
		{"no address", "[redis]\nworkers = 2\n", "address", "is required"},
		{"address without port", "[redis]\naddress = \"localhost\"\n", "address", "host:port"},
		{"address port zero", "[redis]\naddress = \"localhost:0\"\n", "address", "no port"},
		{"address without host", "[redis]\naddress = \":6379\"\n", "address", "no host"},
		{"password in the env key", "[redis]\naddress = \"h:1\"\npassword_env = \"hunter2!\"\n", "password_env", "never holds the password"},
		{"server name without tls", "[redis]\naddress = \"h:1\"\ntls_server_name = \"x\"\n", "tls_server_name", "tls is false"},
		{"db out of range", "[redis]\naddress = \"h:1\"\ndb = -1\n", "db", ""},
		{"workers negative", "[redis]\naddress = \"h:1\"\nworkers = -1\n", "workers", "must be between 0 (the default, 4) and 1024, got -1"},
		{"rows per call too many", "[redis]\naddress = \"h:1\"\nrows_per_call = 100000000\n", "rows_per_call", ""},
		{"bytes per call negative", "[redis]\naddress = \"h:1\"\nbytes_per_call = -1\n", "bytes_per_call", "got -1"},
		{"rows per call negative", "[redis]\naddress = \"h:1\"\nrows_per_call = -1\n", "rows_per_call", "got -1"},
		{"pool size negative", "[redis]\naddress = \"h:1\"\npool_size = -2\n", "pool_size", ""},
		{"timeout not a duration", "[redis]\naddress = \"h:1\"\ncall_timeout = \"soon\"\n", "call_timeout", "Go duration"},
		{"timeout negative", "[redis]\naddress = \"h:1\"\ndial_timeout = \"-1s\"\n", "dial_timeout", "Go duration"},
		{"timeout an integer", "[redis]\naddress = \"h:1\"\ndial_timeout = 5\n", "dial_timeout", ""},
		{"maxmemory negative", "[redis]\naddress = \"h:1\"\nmaxmemory = -1\n", "maxmemory", ""},
		{"unknown policy", "[redis]\naddress = \"h:1\"\nmaxmemory_policy = \"lru\"\n", "maxmemory_policy", "noeviction"},
		{"unknown key", "[redis]\naddress = \"h:1\"\nhost = \"x\"\n", "host", "unknown key"},
		{"two stores", "[redis]\naddress = \"h:1\"\n[mooncake]\nmaster = \"h:2\"\n", "", "unknown section"},
		{"cluster without seeds", "[redis]\ncluster = true\n", "addresses", "is required with cluster = true"},
		{"seeds without cluster", "[redis]\naddresses = [\"h:1\"]\n", "addresses", "is for cluster = true"},
		{"a bad seed", "[redis]\ncluster = true\naddresses = [\"h:1\", \"h2\"]\n", "addresses", "entry 1 must be host:port"},
		{"seeds not a list", "[redis]\ncluster = true\naddresses = \"h:1\"\n", "addresses", ""},
		{"cluster with a db", "[redis]\ncluster = true\naddresses = [\"h:1\"]\ndb = 2\n", "db", "database 0 only"},
		{"cluster not a bool", "[redis]\naddress = \"h:1\"\ncluster = \"yes\"\n", "cluster", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := ParseStoreConfig("bad.toml", []byte(tc.file))
			require.Error(t, err)
			assert.Equal(t, StoreConfig{}, sc)
			assert.ErrorIs(t, err, storeconfig.ErrConfig)
			var ce *storeconfig.Error
			require.True(t, errors.As(err, &ce), "%v", err)
			assert.Equal(t, "bad.toml", ce.File)
			if tc.key != "" {
				assert.Equal(t, tc.key, ce.Key, "%v", err)
			}
			assert.Contains(t, err.Error(), tc.says)
		})
	}
}

func TestLoadStoreConfigNamesAMissingFile(t *testing.T) {
	_, err := LoadStoreConfig(t.TempDir() + "/none.toml")
	require.ErrorIs(t, err, storeconfig.ErrConfig)
	assert.Contains(t, err.Error(), "none.toml")
}

func TestValidateChecksAConfigBuiltInCode(t *testing.T) {
	sc := StoreConfig{File: "code", Redis: RedisConfig{Address: "h:1", Workers: 1, RowsPerCall: 1, BytesPerCall: 1}}
	require.NoError(t, sc.Validate())
	sc.Redis.Workers = 0
	require.NoError(t, sc.Validate(), "0 workers means the default, as in Config")
	sc.Redis.Workers = -1
	err := sc.Validate()
	require.ErrorIs(t, err, storeconfig.ErrConfig)
	var e *storeconfig.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "workers", e.Key)
}

// A count of 0 in the file means what it means in Config: the default
// (the file's settings say so, and a driver built from them gets it); a
// negative one is refused naming the key.
func TestStoreFileZeroIsTheDefault(t *testing.T) {
	sc, err := ParseStoreConfig("r.toml", []byte("[redis]\naddress = \"h:1\"\nworkers = 0\nrows_per_call = 0\nbytes_per_call = 0\n"))
	require.NoError(t, err)
	assert.Equal(t, DefaultWorkers, sc.Redis.Workers)
	assert.Equal(t, DefaultRowsPerCall, sc.Redis.RowsPerCall)
	assert.Equal(t, int64(DefaultBytesPerCall), sc.Redis.BytesPerCall)
	fromFile, err := sc.Redis.DriverConfig().withDefaults()
	require.NoError(t, err)
	fromCode, err := Config{}.withDefaults()
	require.NoError(t, err)
	fromFile.Logger, fromCode.Logger = nil, nil
	assert.Equal(t, fromCode, fromFile, "a file's zeros and Config's zeros give one driver")

	code := StoreConfig{File: "code", Redis: RedisConfig{Address: "h:1"}}
	require.NoError(t, code.Validate(), "a config built in code with zeros is valid too")
	opt, err := code.ClientOption()
	require.NoError(t, err)
	assert.Equal(t, DefaultWorkers, opt.BlockingPoolSize, "a connection for each of the default workers")
}

func TestClientOption(t *testing.T) {
	sc, err := ParseStoreConfig("r.toml", []byte("[redis]\naddress = \"10.0.0.5:6379\"\nworkers = 6\nuser = \"kv\"\ndb = 2\ntls = true\n"))
	require.NoError(t, err)
	opt, err := sc.ClientOption()
	require.NoError(t, err)
	assert.Equal(t, []string{"10.0.0.5:6379"}, opt.InitAddress)
	assert.True(t, opt.ForceSingleClient, "one server, never discovered as a cluster")
	assert.True(t, opt.DisableCache, "no client-side cache")
	assert.Equal(t, 6, opt.BlockingPoolSize, "a connection for every worker's stream")
	assert.Equal(t, "kv", opt.Username)
	assert.Equal(t, 2, opt.SelectDB)
	require.NotNil(t, opt.TLSConfig)
	assert.Equal(t, "10.0.0.5", opt.TLSConfig.ServerName)
	assert.Equal(t, DefaultDialTimeout, opt.Dialer.Timeout)
	assert.GreaterOrEqual(t, opt.ConnWriteTimeout, DerivedTimeout(DefaultBytesPerCall))
}

func TestClientOptionReadsThePasswordVariable(t *testing.T) {
	sc, err := ParseStoreConfig("r.toml", []byte("[redis]\naddress = \"h:1\"\npassword_env = \"KVSHARE_TEST_REDIS_PW\"\n"))
	require.NoError(t, err)
	t.Setenv("KVSHARE_TEST_REDIS_PW", "")
	_, err = sc.ClientOption()
	require.ErrorIs(t, err, ErrNoPassword)
	assert.Contains(t, err.Error(), "KVSHARE_TEST_REDIS_PW")
	t.Setenv("KVSHARE_TEST_REDIS_PW", "s3cret")
	opt, err := sc.ClientOption()
	require.NoError(t, err)
	assert.Equal(t, "s3cret", opt.Password)
}

func TestTimeouts(t *testing.T) {
	assert.Equal(t, 2*time.Second, DerivedTimeout(0))
	assert.Equal(t, 3*time.Second, DerivedTimeout(64<<20), "64 MiB at 64 MiB/s")
	assert.Equal(t, maxCallDeadline, DerivedTimeout(1<<50))
	assert.Equal(t, 10*time.Second, ConnTimeout(Config{}), "rueidis's default when every part is quick")
	assert.Equal(t, 40*time.Second, ConnTimeout(Config{CallTimeout: 40 * time.Second}))
	assert.Equal(t, DerivedTimeout(1<<30), ConnTimeout(Config{BytesPerCall: 1 << 30}))
}

func TestDriverConfigRefusals(t *testing.T) {
	for _, cfg := range []Config{{Workers: -1}, {RowsPerCall: -1}, {BytesPerCall: -1}, {CallTimeout: -time.Second}} {
		_, err := New(nil, cfg)
		require.ErrorIs(t, err, ErrConfig)
		_, err = cfg.withDefaults()
		require.ErrorIs(t, err, ErrConfig)
		assert.True(t, strings.Contains(err.Error(), "want >= 0"), "%v", err)
	}
}

// FuzzParseStoreConfig: any bytes either parse into a config that
// validates, or are refused with storeconfig.ErrConfig and nothing
// returned; never a panic.
func FuzzParseStoreConfig(f *testing.F) {
	f.Add([]byte("[redis]\naddress = \"127.0.0.1:6379\"\n"))
	f.Add([]byte("[blob]\nkey_prefix = \"a\"\n[redis]\naddress = \"h:1\"\ncall_timeout = \"1s\"\nmaxmemory_policy = \"allkeys-lru\"\n"))
	f.Add([]byte("[redis]\naddress = 5\n"))
	f.Add([]byte("[redis.x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := ParseStoreConfig("fuzz.toml", data)
		if err != nil {
			require.ErrorIs(t, err, storeconfig.ErrConfig)
			require.Equal(t, StoreConfig{}, sc)
			return
		}
		require.NoError(t, sc.Validate())
	})
}

// A cluster's seeds: address first when given, then addresses, each
// once; the client option carries them all.
func TestStoreFileCluster(t *testing.T) {
	sc, err := ParseStoreConfig("c.toml", []byte("[redis]\ncluster = true\naddress = \"a:1\"\naddresses = [\"b:2\", \"a:1\", \"c:3\"]\n"))
	require.NoError(t, err)
	assert.True(t, sc.Redis.Cluster)
	assert.Equal(t, []string{"a:1", "b:2", "c:3"}, sc.Redis.Seeds())
	opt, err := sc.ClientOption()
	require.NoError(t, err)
	assert.Equal(t, []string{"a:1", "b:2", "c:3"}, opt.InitAddress)

	sc, err = ParseStoreConfig("c.toml", []byte("[redis]\ncluster = true\naddresses = [\"b:2\"]\ntls = true\n"))
	require.NoError(t, err)
	opt, err = sc.ClientOption()
	require.NoError(t, err)
	assert.Empty(t, opt.TLSConfig.ServerName, "a cluster's nodes are verified under their own hosts")
}
