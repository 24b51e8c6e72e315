package events

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// ErrKeyspaceCluster is returned by [KeyspaceEvictions] for a Redis
// Cluster client: keyspace notifications are each master's own, and the
// node does not subscribe per master; a cluster's removals are learned
// from lookups and fetches that find blocks absent.
var ErrKeyspaceCluster = errors.New("kvshare/events: keyspace notifications are not followed on a Redis Cluster")

// KeyspaceChannels are the keyspace-event channels followed (every
// database's): a key the server evicted under maxmemory, one that
// expired, one deleted. The server publishes them only with
// notify-keyspace-events holding E and the classes (e, x, g): "Egex".
var KeyspaceChannels = []string{"__keyevent@*__:evicted", "__keyevent@*__:expired", "__keyevent@*__:del"}

// KeyspaceEvictions tells p each key the server behind client reports
// evicted, expired or deleted ([Publisher.Evicted]), until ctx ends; it
// returns ctx's error then. Notifications are fire and forget: those
// sent while the subscription's connection is down are lost, and the
// subscription is made again (Stats.KeyspaceResubscribed counts it);
// blocks evicted meanwhile are announced removed only once a lookup or a
// fetch finds them absent. A server whose notify-keyspace-events lacks
// the events is logged, and followed all the same (it may be enabled
// later). A cluster client is refused with [ErrKeyspaceCluster].
func KeyspaceEvictions(ctx context.Context, client rueidis.Client, p *Publisher) error {
	if client.Mode() == rueidis.ClientModeCluster {
		return ErrKeyspaceCluster
	}
	if flags, err := client.Do(ctx, client.B().ConfigGet().Parameter("notify-keyspace-events").Build()).AsStrMap(); err == nil {
		if f := flags["notify-keyspace-events"]; !strings.Contains(f, "E") || !strings.ContainsAny(f, "eA") {
			p.log.Warn("kvshare/events: the Redis server does not publish evictions: set notify-keyspace-events to Egex for BlockRemoved on evictions", "notify-keyspace-events", f)
		}
	}
	pause := keyspacePause
	for first := true; ; first = false {
		if !first {
			p.tally.resubscribed.Add(1)
		}
		err := client.Receive(ctx, client.B().Psubscribe().Pattern(KeyspaceChannels...).Build(), func(m rueidis.PubSubMessage) {
			p.Evicted(m.Message)
		})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		p.log.Warn("kvshare/events: the keyspace subscription ended; notifications meanwhile are lost: subscribing again", "err", err)
		if errors.Is(err, rueidis.ErrClosing) {
			return fmt.Errorf("kvshare/events: keyspace notifications: %w", err)
		}
		select { // a server that is down is asked again after a pause, doubling to a second
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// keyspacePause is the first pause before subscribing again.
const keyspacePause = 10 * time.Millisecond
