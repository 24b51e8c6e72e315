package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/redisdrv/redistest"
	"github.com/kvshare/kvshare/tools/internal/poolconfig"
	"github.com/kvshare/kvshare/tools/internal/redisconfig"
	"github.com/kvshare/kvshare/tools/internal/roundtrip"
	"github.com/kvshare/kvshare/tools/internal/storefile"
)

// storeFlags are the flags that name the store a command runs through:
// a store file of a running store, a Mooncake folder to start a loopback
// pool from, or a redis-server binary to start a loopback server (or,
// with --redis-cluster, a three-node cluster) from.
type storeFlags struct {
	store, mooncakeDir, redisServer string
	redisCluster                    bool
	// providers and replicas shape a pool started from mooncakeDir.
	providers, replicas int
}

// addStoreFlags registers --store, --mooncake-dir (unless mooncake is
// false), --redis-server and --redis-cluster on fs; what says what the
// command does with the store ("run through", "soak").
func addStoreFlags(fs *flag.FlagSet, what string, mooncake bool) *storeFlags {
	s := &storeFlags{}
	fs.StringVar(&s.store, "store", "", "store file (TOML, [blob] and [mooncake], [redis], [memory] or [disk]): "+what+" the Mooncake pool, Redis server or Redis Cluster it names, the embedded store it shapes, or the disk tier in the directory it names")
	if mooncake {
		fs.StringVar(&s.mooncakeDir, "mooncake-dir", "", "Mooncake folder (bin/, lib/): start a loopback pool from it and "+what+" that")
		fs.IntVar(&s.providers, "providers", 0, "with --mooncake-dir: segment providers of the pool started (0: one)")
		fs.IntVar(&s.replicas, "replicas", 0, "with --mooncake-dir: copies every put of the pool started asks for (0: one)")
	}
	fs.StringVar(&s.redisServer, "redis-server", "", "redis-server binary (a path, or a name in PATH): start a loopback Redis server from it and "+what+" that")
	fs.BoolVar(&s.redisCluster, "redis-cluster", false, "with --redis-server: start a loopback three-node Redis Cluster instead (redis-cli beside the binary) and "+what+" that")
	return s
}

// refused returns the line that says the flags do not go together, or
// "" when they do: two ways to name one store (twice), or
// --redis-cluster without --redis-server to start the cluster from.
func (s *storeFlags) refused() string {
	if line := s.twice(); line != "" {
		return line
	}
	if (s.providers != 0 || s.replicas != 0) && s.mooncakeDir == "" {
		return "--providers and --replicas shape a pool started from --mooncake-dir DIR, not given here"
	}
	return clusterRefused(s.redisCluster, s.redisServer, s.store)
}

// clusterRefused returns the line that says --redis-cluster was given
// without --redis-server, or with a store file (cluster says whether it
// was given at all), or "".
func clusterRefused(cluster bool, redisServer, store string) string {
	switch {
	case !cluster:
		return ""
	case store != "" && redisServer == "":
		return "--redis-cluster starts a loopback cluster from --redis-server BINARY, not given here; a store file names a cluster itself ([redis] cluster = true)"
	case redisServer == "":
		return "--redis-cluster starts a loopback cluster from a redis-server binary: give --redis-server BINARY with it"
	}
	return ""
}

// twice returns the line that says two of the flags name the same store,
// or "" when at most one was given.
func (s *storeFlags) twice() string {
	var given []string
	for _, f := range []struct{ name, value string }{{"--store", s.store}, {"--mooncake-dir", s.mooncakeDir}, {"--redis-server", s.redisServer}} {
		if f.value != "" {
			given = append(given, f.name)
		}
	}
	switch {
	case len(given) < 2:
		return ""
	case len(given) == 2 && s.redisServer == "":
		return "--store and --mooncake-dir are two ways to name a pool: give one"
	case len(given) == 2:
		return given[0] + " and " + given[1] + " are two ways to name a store: give one"
	}
	return "--store, --mooncake-dir and --redis-server are three ways to name a store: give one"
}

// started is the store a command runs through, as open found or started
// it: its store file, which kind it is, what to say of a store started
// for the run, what it is ("pool", "Redis server", "Redis Cluster", for
// a failure to stop it), and stop, which stops that (nil for a store
// file given).
type started struct {
	pool  *pool.Pool // a pool started from --mooncake-dir
	path  string
	kind  storefile.Kind
	about string
	what  string
	stop  func() error
}

// close stops what was started, saying so on stderr when it fails.
func (s started) close(stderr io.Writer) {
	if s.stop == nil {
		return
	}
	if err := s.stop(); err != nil {
		fmt.Fprintf(stderr, "kvshare: stopping the %s: %v\n", s.what, err)
	}
}

// open reads the kind of the store file --store names, or starts the
// loopback store --mooncake-dir or --redis-server asks for (redis shapes
// a server started from --redis-server, or each node of the cluster
// --redis-cluster asks for); the zero started means none was named. A
// started store is stopped by close, which the caller defers, so it is
// stopped after an error of the job or an interrupt too (its
// processes are children that die with this one in any case). The exit
// status of an error is 2 for a store file that names no store (bad
// usage), 1 for a store that did not start.
func (s *storeFlags) open(ctx context.Context, redis redistest.Options, logger *slog.Logger) (started, int, error) {
	switch {
	case s.store != "":
		kind, err := storefile.Read(s.store)
		if err != nil {
			return started{}, 2, err
		}
		return started{path: s.store, kind: kind}, 0, nil
	case s.mooncakeDir != "":
		path, p, stop, err := poolconfig.Start(ctx, s.mooncakeDir, pool.Options{Providers: s.providers}, logger, poolconfig.Replicas(s.replicas))
		if err != nil {
			return started{}, 1, err
		}
		return started{path: path, kind: storefile.Mooncake, what: "pool", stop: stop, pool: p}, 0, nil
	case s.redisServer != "" && s.redisCluster:
		o := redistest.ClusterOptions{MaxMemory: redis.MaxMemory, Policy: redis.Policy, Logger: redis.Logger}
		path, c, stop, err := redisconfig.StartCluster(ctx, s.redisServer, o, logger)
		if err != nil {
			return started{}, 1, err
		}
		return started{path: path, kind: storefile.Redis, what: "Redis Cluster", stop: stop,
			about: fmt.Sprintf("a loopback Redis Cluster of %d nodes, redis-server %s started from %s", len(c.Nodes()), c.Node(0).Version(), s.redisServer)}, 0, nil
	case s.redisServer != "":
		path, srv, stop, err := redisconfig.Start(ctx, s.redisServer, redis, logger)
		if err != nil {
			return started{}, 1, err
		}
		return started{path: path, kind: storefile.Redis, what: "Redis server", stop: stop,
			about: fmt.Sprintf("a loopback redis-server %s started from %s", srv.Version(), s.redisServer)}, 0, nil
	}
	return started{}, 0, nil
}

// jobStore is the store a store file names, as the round trip and the
// soak take it.
type jobStore interface {
	roundtrip.Store
	// Configure points a round trip's config at the store and takes the
	// file's [blob] settings.
	Configure(*roundtrip.Config)
}

// jobStore reads the store file of s as its kind's store (nil, nil when
// none was named); a refusal names the file, the section and the key.
func (s started) jobStore(logger *slog.Logger) (jobStore, error) {
	switch s.kind {
	case storefile.Mooncake:
		m, err := roundtrip.MooncakeStore(s.path, logger)
		if err != nil {
			return nil, err
		}
		return m, nil
	case storefile.Redis:
		r, err := roundtrip.RedisStore(s.path, logger)
		if err != nil {
			return nil, err
		}
		return r, nil
	case storefile.Memory:
		m, err := roundtrip.MemoryStoreFile(s.path)
		if err != nil {
			return nil, err
		}
		return m, nil
	case storefile.Disk:
		d, err := roundtrip.DiskStoreFile(s.path, logger)
		if err != nil {
			return nil, err
		}
		return d, nil
	}
	return nil, nil
}

// closeStore gives back the memory of an embedded store the command
// took (a store that is no io.Closer has nothing to give back), saying
// so on stderr when that is refused.
func closeStore(store roundtrip.Store, stderr io.Writer) {
	if c, ok := store.(io.Closer); ok {
		if err := c.Close(); err != nil {
			fmt.Fprintln(stderr, "kvshare: the embedded store:", err)
		}
	}
}
