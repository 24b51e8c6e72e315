package redisdrv

import (
	"cmp"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvshare/kvshare/storeconfig"
	"github.com/kvshare/kvshare/storeconfig/tomlfile"
)

// Section is the store section a Redis store file holds.
const Section = "redis"

// The defaults a store file gets for keys it leaves out.
const (
	DefaultDialTimeout = 5 * time.Second
)

// The ranges a store file's numbers must lie in.
const (
	MaxWorkers  = 1024
	MaxPoolSize = 4096
	MaxDB       = 1 << 16
)

// The [redis] section's keys, exactly as a file spells them.
var sections = map[string][]string{
	Section: {"address", "addresses", "cluster", "user", "password_env", "tls", "tls_server_name", "db", "pool_size",
		"dial_timeout", "call_timeout", "workers", "rows_per_call", "bytes_per_call",
		"maxmemory", "maxmemory_policy"},
}

// StoreConfig is one Redis store file: the backend's [blob] settings and
// the [redis] section. Build one with [LoadStoreConfig] or
// [ParseStoreConfig]; one built in code is checked again by
// [StoreConfig.Validate] (and by [OpenConfig]).
type StoreConfig struct {
	// File is the path the config was read from (for error messages).
	File  string
	Blob  storeconfig.Blob
	Redis RedisConfig
}

// RedisConfig is the [redis] section: where the server is, how to
// authenticate, and how the driver cuts its work. The file key of each
// field is in parentheses.
type RedisConfig struct {
	// Address (address) is the server's host:port: required for one
	// server. Cluster (cluster = true) says the servers are a Redis
	// Cluster's nodes; Addresses (addresses, a list of host:port) are
	// then its seeds, the nodes asked for the slot map (address, when
	// given, is the first seed). A cluster takes db 0 only.
	Address   string
	Cluster   bool
	Addresses []string
	// User (user) is the ACL user; empty means the default user.
	User string
	// PasswordEnv (password_env) names the environment variable that
	// holds the password, read when the client is opened; empty means no
	// password. The file never holds the password itself.
	PasswordEnv string
	// TLS (tls) dials the server over TLS, verifying its certificate
	// against the system's roots; TLSServerName (tls_server_name) is the
	// name verified, by default the address's host.
	TLS           bool
	TLSServerName string
	// DB (db) is the database number selected on every connection.
	DB int
	// PoolSize (pool_size) caps the connections the parts use (each
	// worker holds one while its part's round trip runs); 0 means
	// Workers. Lookups share one more, pipelined.
	PoolSize int
	// DialTimeout (dial_timeout, a Go duration such as "5s") bounds
	// connecting; default 5 s.
	DialTimeout time.Duration
	// CallTimeout (call_timeout) bounds one part's round trip; left out,
	// it is derived from the part's bytes (see Config.CallTimeout).
	CallTimeout time.Duration
	// Workers (workers), RowsPerCall (rows_per_call) and BytesPerCall
	// (bytes_per_call) shape the driver (see [Config]); 0, or left out,
	// means the default, 4, 64 and 64 MiB, as in Config.
	Workers      int
	RowsPerCall  int
	BytesPerCall int64
	// MaxMemory (maxmemory) is the least maxmemory, in bytes, the server
	// must be configured with, and MaxMemoryPolicy (maxmemory_policy)
	// the policy it must have: expectations kvshare doctor checks
	// against the server's CONFIG GET. Zero and empty check nothing.
	MaxMemory       int64
	MaxMemoryPolicy string
}

// LoadStoreConfig reads and checks the store file at path. Every refusal
// is a [*storeconfig.Error] (matching storeconfig.ErrConfig) naming the
// file, and the section and key where it lies; several are joined. A
// file may hold [blob] and [redis] only.
func LoadStoreConfig(path string) (StoreConfig, error) {
	return decodeStoreConfig(path, tomlfile.Read(path, sections))
}

// ParseStoreConfig parses and checks a store file held in memory; file
// names it in errors and in the result's File.
func ParseStoreConfig(file string, data []byte) (StoreConfig, error) {
	return decodeStoreConfig(file, tomlfile.Parse(file, data, sections))
}

// Validate checks a config's values as [ParseStoreConfig] does.
func (c StoreConfig) Validate() error {
	return append(c.Blob.Check(c.File), c.check()...).Err()
}

// decodeStoreConfig decodes a parsed file (defaults for the keys left
// out and for keys refused), checks the values and returns every
// refusal.
func decodeStoreConfig(file string, f *tomlfile.File) (StoreConfig, error) {
	cfg := StoreConfig{File: file}
	r := &cfg.Redis
	r.DialTimeout = DefaultDialTimeout
	r.Workers = DefaultWorkers
	r.RowsPerCall = DefaultRowsPerCall
	r.BytesPerCall = DefaultBytesPerCall
	cfg.Blob = f.Blob()
	if !f.Has(Section) && f.Parsed() {
		f.Refuse(Section, "", "is required: a Redis store file holds a [redis] section")
	}
	if s := f.Section(Section); s != nil {
		r.Address, _ = s.String("address", "")
		r.Cluster = s.Bool("cluster", false)
		r.Addresses = s.Strings("addresses")
		r.User, _ = s.String("user", "")
		r.PasswordEnv, _ = s.String("password_env", "")
		r.TLS = s.Bool("tls", false)
		r.TLSServerName, _ = s.String("tls_server_name", "")
		r.DB = int(s.Int("db", 0))
		r.PoolSize = int(s.Int("pool_size", 0))
		r.DialTimeout = duration(s, "dial_timeout", r.DialTimeout)
		r.CallTimeout = duration(s, "call_timeout", 0)
		// 0 means the default, as in Config.
		r.Workers = cmp.Or(int(s.Int("workers", 0)), DefaultWorkers)
		r.RowsPerCall = cmp.Or(int(s.Int("rows_per_call", 0)), DefaultRowsPerCall)
		r.BytesPerCall = cmp.Or(s.Int("bytes_per_call", 0), DefaultBytesPerCall)
		r.MaxMemory = s.NonNegative("maxmemory", 0)
		r.MaxMemoryPolicy, _ = s.String("maxmemory_policy", "")
	}
	if f.Parsed() {
		for _, e := range cfg.check() {
			f.Add(e)
		}
	}
	if err := f.Finish(); err != nil {
		return StoreConfig{}, err
	}
	return cfg, nil
}

// duration reads a Go duration string ("5s", "250ms").
func duration(s *tomlfile.Section, key string, def time.Duration) time.Duration {
	v, ok := s.String(key, "")
	if !ok || v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		s.Refuse(key, "wants a positive Go duration such as \"5s\", got %q", v)
		return def
	}
	return d
}

// The policies a Redis 7 server knows (maxmemory-policy).
var policies = []string{"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random",
	"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"}

// check returns a refusal for every value of the [redis] section that is
// missing or out of its range.
func (c StoreConfig) check() storeconfig.Findings {
	var findings storeconfig.Findings
	refuse := func(key, format string, args ...any) { findings.Addf(c.File, Section, key, format, args...) }
	inRange := func(key string, v, lo, hi int64) { findings.InRange(c.File, Section, key, v, lo, hi) }
	r := c.Redis
	switch {
	case r.Cluster && r.Address == "" && len(r.Addresses) == 0:
		refuse("addresses", "is required with cluster = true (a list of seed nodes, host:port)")
	case !r.Cluster && len(r.Addresses) > 0:
		refuse("addresses", "is for cluster = true; one server takes address")
	case !r.Cluster && r.Address == "":
		refuse("address", "is required (host:port)")
	}
	if r.Address != "" {
		if reason := addressProblem(r.Address); reason != "" {
			refuse("address", "%s, got %q", reason, r.Address)
		}
	}
	for i, a := range r.Addresses {
		if reason := addressProblem(a); reason != "" {
			refuse("addresses", "entry %d %s, got %q", i, reason, a)
		}
	}
	if r.Cluster && r.DB != 0 {
		refuse("db", "must be 0 with cluster = true (a Redis Cluster has database 0 only), got %d", r.DB)
	}
	if r.PasswordEnv != "" && !isEnvName(r.PasswordEnv) {
		refuse("password_env", "must name an environment variable (letters, digits, _), got %q: the file never holds the password itself", r.PasswordEnv)
	}
	if r.TLSServerName != "" && !r.TLS {
		refuse("tls_server_name", "is set but tls is false")
	}
	inRange("db", int64(r.DB), 0, MaxDB)
	inRange("pool_size", int64(r.PoolSize), 0, MaxPoolSize)
	if r.DialTimeout < 0 {
		refuse("dial_timeout", "must be positive, got %v", r.DialTimeout)
	}
	if r.CallTimeout < 0 {
		refuse("call_timeout", "must be positive, got %v", r.CallTimeout)
	}
	findings.InRangeOrDefault(c.File, Section, "workers", int64(r.Workers), MaxWorkers, DefaultWorkers)
	findings.InRangeOrDefault(c.File, Section, "rows_per_call", int64(r.RowsPerCall), storeconfig.MaxRowsPerCall, DefaultRowsPerCall)
	findings.InRangeOrDefault(c.File, Section, "bytes_per_call", r.BytesPerCall, storeconfig.MaxBytesPerCall, DefaultBytesPerCall)
	if r.MaxMemory < 0 {
		refuse("maxmemory", "must be >= 0, got %d", r.MaxMemory)
	}
	if p := r.MaxMemoryPolicy; p != "" && !slices.Contains(policies, p) {
		refuse("maxmemory_policy", "must be one of %s, got %q", strings.Join(policies, ", "), p)
	}
	return findings
}

// addressProblem says why addr is not one host:port, or "".
func addressProblem(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "must be host:port"
	}
	if host == "" {
		return "has no host"
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return "has no port in 1 to 65535"
	}
	return ""
}

// isEnvName reports whether s can name an environment variable.
func isEnvName(s string) bool {
	for i, c := range s {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}

// DriverConfig returns the driver settings of the [redis] section.
func (r RedisConfig) DriverConfig() Config {
	return Config{Workers: r.Workers, RowsPerCall: r.RowsPerCall, BytesPerCall: r.BytesPerCall, CallTimeout: r.CallTimeout}
}

// Seeds returns the addresses the driver connects to first: address for
// one server; for a cluster, address (when given) and then addresses,
// each once.
func (r RedisConfig) Seeds() []string {
	var seeds []string
	if r.Address != "" {
		seeds = append(seeds, r.Address)
	}
	for _, a := range r.Addresses {
		if !slices.Contains(seeds, a) {
			seeds = append(seeds, a)
		}
	}
	return seeds
}
