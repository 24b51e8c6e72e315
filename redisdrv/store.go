package redisdrv

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/kvshare/kvshare/drivekit"
)

// store is what is Redis's under the kit: the pipelines of one store
// call, the cluster routing, the verdict table and the resend rule. Its
// lock guards its counters.
type store struct {
	route *router
	cfg   Config
	log   *slog.Logger

	mu     sync.Mutex
	counts storeCounts
}

// storeCounts are the store's own counters, beside the kit's.
type storeCounts struct {
	roundTrips, panics, resends, partsSplit, moved, asked int64
}

var (
	_ drivekit.Store    = (*store)(nil)
	_ drivekit.Looker   = (*store)(nil)
	_ drivekit.Closer   = (*store)(nil)
	_ drivekit.Counting = (*store)(nil)
)

// add adds what one store call or lookup came to.
func (s *store) add(sn sent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts.roundTrips += sn.trips
	s.counts.resends += sn.resends
	s.counts.moved += sn.moved
	s.counts.asked += sn.asked
	if sn.split {
		s.counts.partsSplit++
	}
	if sn.panicked != nil {
		s.counts.panics++
	}
}

// Close closes the client (every node's, on a cluster).
func (s *store) Close() error {
	if err := s.route.close(); err != nil {
		return fmt.Errorf("redisdrv: %w", err)
	}
	return nil
}

// Counters is the store's own counters, for metrics beside the kit's
// (drivekit.Counting).
func (s *store) Counters(dst []drivekit.Counter) []drivekit.Counter {
	s.mu.Lock()
	c := s.counts
	s.mu.Unlock()
	_, reads := s.route.nodes()
	return append(dst,
		drivekit.Counter{Name: "round_trips", Unit: "{pipeline}", Value: c.roundTrips, Description: "Pipelines sent to a server (one a server a part holds rows on, one a lookup's server, one more a resend)."},
		drivekit.Counter{Name: "resends", Unit: "{pipeline}", Value: c.resends, Description: "Pipelines sent again because their pooled connection was found dead before its first reply."},
		drivekit.Counter{Name: "client_panics", Unit: "{panic}", Value: c.panics, Description: "Panics recovered around the Redis client."},
		drivekit.Counter{Name: "parts_split", Unit: "{part}", Value: c.partsSplit, Description: "Parts whose rows lay on more than one cluster node."},
		drivekit.Counter{Name: "rows_moved", Unit: "{row}", Value: c.moved, Description: "Rows a cluster node answered MOVED, sent again to the node named."},
		drivekit.Counter{Name: "rows_asked", Unit: "{row}", Value: c.asked, Description: "Rows a cluster node answered ASK, sent again to the node named."},
		drivekit.Counter{Name: "slot_map_reads", Unit: "{read}", Value: reads, Description: "Readings of the cluster's slot map (CLUSTER SLOTS), the first at start included."},
	)
}
