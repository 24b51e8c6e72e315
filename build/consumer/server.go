package consumer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/kvshare/kvshare/build/modules"
	"github.com/kvshare/kvshare/redisdrv/redistest"
)

// EnvRedisAddr is the variable a consumer that needs a Redis server
// finds its host:port in.
const EnvRedisAddr = "KVSHARE_REDIS_ADDR"

// redisBinary is the redis-server a consumer's check starts: the one
// KVSHARE_REDIS_SERVER names when it is set, else redis-server on PATH
// (lookPath), else "" (none here). A binary that is found but fails
// redistest.Check is an error naming it and where it came from.
func redisBinary(ctx context.Context, getenv func(string) string, lookPath func(string) (string, error)) (string, error) {
	binary, from := getenv(redistest.EnvServer), redistest.EnvServer
	if binary == "" {
		found, err := lookPath("redis-server")
		if err != nil {
			return "", nil
		}
		binary, from = found, "PATH"
	}
	if _, err := redistest.Check(ctx, binary); err != nil {
		return "", fmt.Errorf("the redis-server from %s (%s) cannot be used: %w", from, binary, err)
	}
	return binary, nil
}

// A running is a server started for one consumer's run: the variables
// that name it to the program, and how to stop it.
type running struct {
	env  []string
	stop func() error
}

// startServer starts the server consumer c needs (none when c.Server is
// empty), for as long as ctx lasts or until its stop. It reports ran
// false, with nothing started, when the server's binary is not on this
// machine (getenv and lookPath find it): then the consumer is built but
// not run, and a line on w says so.
func startServer(ctx context.Context, c modules.Consumer, getenv func(string) string, lookPath func(string) (string, error), w io.Writer) (running, bool, error) {
	switch c.Server {
	case "":
		return running{stop: func() error { return nil }}, true, nil
	case modules.ServerRedis:
	default:
		return running{}, false, fmt.Errorf("build/modules names server %q, which the consumer check cannot start (want %q or none)", c.Server, modules.ServerRedis)
	}
	binary, err := redisBinary(ctx, getenv, lookPath)
	if err != nil {
		return running{}, false, err
	}
	if binary == "" {
		fmt.Fprintf(w, "consumers: %s built, not run: no redis-server (set %s or install redis-server)\n", c.Dir, redistest.EnvServer)
		return running{}, false, nil
	}
	srv, err := redistest.Start(ctx, binary, redistest.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return running{}, false, fmt.Errorf("starting %s: %w", binary, err)
	}
	fmt.Fprintf(w, "consumer: %s: redis-server (%s) on %s\n", c.Dir, binary, srv.Addr())
	return running{env: []string{EnvRedisAddr + "=" + srv.Addr()}, stop: srv.Stop}, true, nil
}

// stopServer stops a consumer's server, joining a failure to stop it to
// the run's error.
func stopServer(r running, err error) error {
	if stopErr := r.stop(); stopErr != nil {
		return errors.Join(err, fmt.Errorf("stopping its server: %w", stopErr))
	}
	return err
}
