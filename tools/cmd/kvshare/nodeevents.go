package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/events"
	"github.com/kvshare/kvshare/redisdrv"
	"github.com/kvshare/kvshare/tools/internal/storefile"
)

// eventFlags are kvshare node's flags for KV events: where to publish
// them (off unless --events is given), the replay socket, the medium,
// and whether to follow a Redis store's keyspace notifications.
type eventFlags struct {
	fs       *flag.FlagSet
	endpoint *string
	replay   *string
	medium   *string
	keyspace *bool
	announce *int
	about    string // the line kvshare node prints once serving; set by open
}

func addEventFlags(fs *flag.FlagSet) *eventFlags {
	return &eventFlags{
		fs:       fs,
		endpoint: fs.String("events", "", "publish KV events for routers (vLLM's BlockStored / BlockRemoved / AllBlocksCleared, msgpack over a ZeroMQ PUB socket, topic the scope's digest) bound at this endpoint, such as tcp://*:5557 (default: none)"),
		replay:   fs.String("events-replay", "", "with --events: the ZeroMQ ROUTER endpoint that replays missed batches, such as tcp://*:5558 (default: none)"),
		medium:   fs.String("events-medium", "", "with --events: the medium every event names (default kvshare:embedded, kvshare:mooncake, kvshare:redis or kvshare:disk, after the store)"),
		keyspace: fs.Bool("events-keyspace", true, "with --events over a Redis server: follow its keyspace notifications (evicted, expired, deleted keys: BlockRemoved; the server needs notify-keyspace-events Egex); never on a Redis Cluster"),
		announce: fs.Int("events-announced", 0, "with --events: blocks remembered as announced, for BlockRemoved; past it the oldest is forgotten (default 1048576)"),
	}
}

// open starts the publisher when --events is given: nil, and a no-op
// stop, when not. The stop closes it (and the keyspace subscription);
// call it after the node's shutdown.
func (f *eventFlags) open(ctx context.Context, storePath string, logger *slog.Logger) (*events.Publisher, func(), error) {
	if *f.endpoint == "" {
		for _, name := range []string{"events-replay", "events-medium", "events-keyspace", "events-announced"} {
			if flagSet(f.fs, name) {
				return nil, nil, fmt.Errorf("--%s needs --events", name)
			}
		}
		return nil, func() {}, nil
	}
	kind := storefile.Kind(0)
	if storePath != "" {
		k, err := storefile.Read(storePath)
		if err != nil {
			return nil, nil, err
		}
		kind = k
	}
	medium := *f.medium
	if medium == "" {
		medium = "kvshare:" + map[storefile.Kind]string{0: "embedded", storefile.Memory: "embedded", storefile.Disk: "disk", storefile.Mooncake: "mooncake", storefile.Redis: "redis"}[kind]
	}
	p, err := events.Open(events.Config{Endpoint: *f.endpoint, ReplayEndpoint: *f.replay, Medium: medium, Announced: *f.announce, Logger: logger})
	if err != nil {
		return nil, nil, err
	}
	f.about = fmt.Sprintf("kvshare node: KV events at %s (replay %s, medium %s)", p.Endpoint(), orNone(p.ReplayEndpoint()), medium)
	if kind != storefile.Redis || !*f.keyspace {
		return p, func() { _ = p.Close() }, nil
	}
	client, err := keyspaceClient(storePath)
	if err != nil {
		_ = p.Close()
		return nil, nil, err
	}
	if client == nil {
		logger.Info("kvshare node: the Redis store is a cluster: keyspace notifications are not followed; removals come from lookups and fetches that find blocks absent")
		return p, func() { _ = p.Close() }, nil
	}
	kctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := events.KeyspaceEvictions(kctx, client, p); err != nil && !errors.Is(err, context.Canceled) {
			logger.Warn("kvshare node: keyspace notifications", "err", err)
		}
	}()
	return p, func() {
		cancel()
		<-done
		client.Close()
		_ = p.Close()
	}, nil
}

// keyspaceClient is a client of the Redis store file's server, for its
// keyspace notifications; nil for a cluster.
func keyspaceClient(path string) (rueidis.Client, error) {
	sc, err := redisdrv.LoadStoreConfig(path)
	if err != nil {
		return nil, err
	}
	if sc.Redis.Cluster {
		return nil, nil
	}
	opt, err := sc.ClientOption()
	if err != nil {
		return nil, err
	}
	return rueidis.NewClient(opt)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
