package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/redisdrv"
	"github.com/kvshare/kvshare/redisdrv/slotmap"
)

// The checks of a Redis store file, by the name each prints, after
// CheckConfig and CheckKeyPrefix, in the order they run.
const (
	CheckPassword    = "password"
	CheckServer      = "server"
	CheckVersion     = "version"
	CheckMaxMemory   = "maxmemory"
	CheckEviction    = "eviction"
	CheckPersistence = "persistence"
	CheckLookup      = "probe lookup"
	// The probe's put, get and remove print as CheckPut, CheckGet and
	// CheckRemove; the close as CheckClose.
)

// redisChecks lists every check of a Redis store file in order.
var redisChecks = [...]string{CheckConfig, CheckKeyPrefix, CheckPassword, CheckServer, CheckVersion,
	CheckMaxMemory, CheckEviction, CheckPersistence, CheckPut, CheckLookup, CheckGet, CheckRemove, CheckClose}

// runRedis is Run for a Redis store file: the config and the key
// prefix, the password variable, the server's answer, its version, its
// memory limit, eviction policy and persistence, and a one-row round
// trip through a backend over the driver. The server is asked only once
// the password variable is set; the probe runs only when no check failed.
// A cluster's file (cluster = true) goes on in runRedisCluster.
func runRedis(ctx context.Context, opts Options) Report {
	r := &run{Report: Report{File: opts.ConfigPath}, all: redisChecks[:]}
	sc, f := checkRedisConfig(opts.ConfigPath)
	if !r.add(f) {
		r.skipRest("the config was refused")
		return r.Report
	}
	prefix, f := checkKeyPrefix(sc.File, sc.Blob)
	r.add(f)
	if sc.Redis.Cluster {
		r.all = redisClusterChecks[:]
	}
	if !r.add(checkPassword(sc, opts.LookupEnv)) {
		r.skipRest("the password variable is not set")
		return r.Report
	}
	if sc.Redis.Cluster {
		return runRedisCluster(ctx, opts, r, sc, prefix)
	}
	client, f := connect(ctx, sc, opts.Wait)
	if !r.add(f) {
		r.skipRest("the server did not answer")
		return r.Report
	}
	defer client.Close()
	r.add(checkVersion(ctx, client, false, opts.Wait))
	for _, f := range checkMemory(ctx, client, sc, opts.Wait) {
		r.add(f)
	}
	r.add(checkPersistence(ctx, client, opts.Wait))
	if r.failed() {
		r.skipRest("a check above failed")
		return r.Report
	}
	for _, f := range redisProbe(ctx, sc, client, prefix, opts) {
		r.add(f)
	}
	return r.Report
}

// checkRedisConfig reads the store file as the driver will
// (redisdrv.LoadStoreConfig): a refusal names the file, the section and
// the key, one line per refusal.
func checkRedisConfig(path string) (redisdrv.StoreConfig, Finding) {
	sc, err := redisdrv.LoadStoreConfig(path)
	if err != nil {
		return sc, fail(CheckConfig, "%s", configLines(err))
	}
	rc := sc.Redis
	user := "the default user"
	if rc.User != "" {
		user = "user " + rc.User
	}
	tls := "plain TCP"
	if rc.TLS {
		tls = "TLS"
		if rc.TLSServerName != "" {
			tls += " (verifying " + rc.TLSServerName + ")"
		}
	}
	call := "derived from each part's bytes"
	if rc.CallTimeout > 0 {
		call = rc.CallTimeout.String()
	}
	where, of := "address "+rc.Address, ""
	if rc.Cluster {
		where, of = "a Redis Cluster, seeds "+strings.Join(rc.Seeds(), ", ")+",", " of every node"
	}
	return sc, ok(CheckConfig, "%s: %s over %s as %s, db %d; %d workers, parts of %d rows and %s, call timeout %s, dial timeout %v; expects %s%s",
		path, where, tls, user, rc.DB, rc.Workers, rc.RowsPerCall, size(rc.BytesPerCall), call, rc.DialTimeout, expectations(rc), of)
}

// expectations says what the file expects of the server's memory (of
// every node's, for a cluster).
func expectations(rc redisdrv.RedisConfig) string {
	mem := "any maxmemory"
	if rc.MaxMemory > 0 {
		mem = "maxmemory at least " + size(rc.MaxMemory)
	}
	policy := "any maxmemory-policy"
	if rc.MaxMemoryPolicy != "" {
		policy = "maxmemory-policy " + rc.MaxMemoryPolicy
	}
	return mem + " and " + policy
}

// checkPassword checks that the variable [redis] password_env names is
// set; it says nothing of the password itself but its length.
func checkPassword(sc redisdrv.StoreConfig, lookupEnv func(string) (string, bool)) Finding {
	rc := sc.Redis
	user := "the default user"
	if rc.User != "" {
		user = "user " + rc.User
	}
	if rc.PasswordEnv == "" {
		return ok(CheckPassword, "[redis] password_env not set: connects as %s without a password", user)
	}
	pw, _ := lookupEnv(rc.PasswordEnv)
	if pw == "" {
		return fail(CheckPassword, "%s: [redis] password_env names %s, which is unset or empty here: set it to the password of %s",
			sc.File, rc.PasswordEnv, user)
	}
	return ok(CheckPassword, "%s is set (%d bytes, not shown): connects as %s", rc.PasswordEnv, len(pw), user)
}

// connect opens a client exactly as the driver's is opened
// (StoreConfig.ClientOption; the dial bounded by wait as well) and asks
// the server PING.
func connect(ctx context.Context, sc redisdrv.StoreConfig, wait time.Duration) (rueidis.Client, Finding) {
	addr := sc.Redis.Address
	opt, err := sc.ClientOption()
	if err != nil {
		return nil, fail(CheckServer, "%v", err)
	}
	client, took, why := ping(ctx, sc, nodeOption(opt, addr, wait), addr, wait)
	if why != "" {
		return nil, fail(CheckServer, "%s", why)
	}
	return client, ok(CheckServer, "%s answered PING with PONG (connected and handshaken in %v)", addr, took)
}

// nodeOption is the client option of the server at addr, made as the
// driver makes a cluster node's (slotmap.NodeOption: opt, the store
// file's, with addr its one address), the dial bounded by wait as well.
func nodeOption(opt rueidis.ClientOption, addr string, wait time.Duration) rueidis.ClientOption {
	opt = slotmap.NodeOption(opt, addr)
	opt.Dialer.Timeout = min(opt.Dialer.Timeout, wait)
	return opt
}

// ping opens a client of the server at addr with opt and asks it PING,
// within wait. It returns the client and how long connecting and the
// answer took, or, when the server did not answer PONG, why, naming addr
// and saying what to look at.
func ping(ctx context.Context, sc redisdrv.StoreConfig, opt rueidis.ClientOption, addr string, wait time.Duration) (rueidis.Client, time.Duration, string) {
	start := time.Now()
	client, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, 0, fmt.Sprintf("%s: connecting: %v%s", addr, err, connectHint(sc, err))
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	pong, err := client.Do(ctx, client.B().Ping().Build()).ToString()
	if err != nil || pong != "PONG" {
		client.Close()
		if err == nil {
			return nil, 0, fmt.Sprintf("%s answered PING with %q, not PONG: is it a Redis server?", addr, pong)
		}
		return nil, 0, fmt.Sprintf("%s: PING: %v%s", addr, err, connectHint(sc, err))
	}
	return client, since(start), ""
}

// connectHint says what to look at when the server did not answer.
func connectHint(sc redisdrv.StoreConfig, err error) string {
	text := err.Error()
	switch {
	case strings.Contains(text, "WRONGPASS"), strings.Contains(text, "NOAUTH"), strings.Contains(text, "NOPERM"):
		return fmt.Sprintf(" (check [redis] user and the password in the variable [redis] password_env names, in %s)", sc.File)
	case strings.Contains(text, "connection refused"):
		return " (is redis-server running there, bound to that address (bind) and listening on that port?)"
	case strings.Contains(text, "timeout"), strings.Contains(text, "deadline"):
		return " (nothing answered in time: a firewall may drop the packets, or the server is stopped)"
	case sc.Redis.TLS:
		return " (does the server speak TLS there, with a certificate for the name verified? [redis] tls, tls_server_name)"
	case strings.Contains(text, "EOF"), strings.Contains(text, "reset"):
		return " (a server that wants TLS drops plain connections: set [redis] tls = true if it does)"
	}
	return ""
}
