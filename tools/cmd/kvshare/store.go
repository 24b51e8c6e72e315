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
// pool from, or a redis-server binary to start a loopback server from.
type storeFlags struct {
	store, mooncakeDir, redisServer string
}

// addStoreFlags registers --store, --mooncake-dir (unless mooncake is
// false) and --redis-server on fs; what says what the command does with
// the store ("run through", "soak").
func addStoreFlags(fs *flag.FlagSet, what string, mooncake bool) *storeFlags {
	s := &storeFlags{}
	fs.StringVar(&s.store, "store", "", "store file (TOML, [blob] and [mooncake] or [redis]): "+what+" the Mooncake pool or Redis server it names")
	if mooncake {
		fs.StringVar(&s.mooncakeDir, "mooncake-dir", "", "Mooncake folder (bin/, lib/): start a loopback pool from it and "+what+" that")
	}
	fs.StringVar(&s.redisServer, "redis-server", "", "redis-server binary (a path, or a name in PATH): start a loopback Redis server from it and "+what+" that")
	return s
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
// for the run, and stop, which stops that (nil for a store file given).
type started struct {
	path  string
	kind  storefile.Kind
	about string
	stop  func() error
}

// close stops what was started, saying so on stderr when it fails.
func (s started) close(stderr io.Writer) {
	if s.stop == nil {
		return
	}
	what := "pool"
	if s.kind == storefile.Redis {
		what = "Redis server"
	}
	if err := s.stop(); err != nil {
		fmt.Fprintf(stderr, "kvshare: stopping the %s: %v\n", what, err)
	}
}

// open reads the kind of the store file --store names, or starts the
// loopback store --mooncake-dir or --redis-server asks for (redis shapes
// a server started from --redis-server); the zero started means none was
// named. A started store is stopped by close, which the caller defers,
// so it is stopped after an error of the job or an interrupt too (its
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
		path, _, stop, err := poolconfig.Start(ctx, s.mooncakeDir, pool.Options{}, logger)
		if err != nil {
			return started{}, 1, err
		}
		return started{path: path, kind: storefile.Mooncake, stop: stop}, 0, nil
	case s.redisServer != "":
		path, srv, stop, err := redisconfig.Start(ctx, s.redisServer, redis, logger)
		if err != nil {
			return started{}, 1, err
		}
		return started{path: path, kind: storefile.Redis, stop: stop,
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
	}
	return nil, nil
}
