package events

import "sync/atomic"

// Stats counts what a [Publisher] did.
type Stats struct {
	// Batches sent on the PUB socket (Unsent of them the socket refused;
	// they are kept for replay all the same), Events in them.
	Batches, Unsent, Events int64
	// Dropped: hook calls lost because the queue was full (or the
	// publisher closed): a slow publisher never slows the node.
	Dropped int64
	// Forgotten: announced blocks forgotten past Config.Announced; their
	// absence is not published.
	Forgotten int64
	// Replays answered, Replayed batches sent in them, BadReplays
	// requests refused (unreadable, or naming no topic on a node with
	// several).
	Replays, Replayed, BadReplays int64
	// KeyspaceResubscribed: keyspace subscriptions made again after
	// their connection ended (notifications meanwhile were lost).
	KeyspaceResubscribed int64
}

type tally struct {
	batches, unsent, events, dropped, forgotten, replays, replayed, badReplays, resubscribed atomic.Int64
}

// Stats returns the publisher's counts.
func (p *Publisher) Stats() Stats {
	t := &p.tally
	return Stats{Batches: t.batches.Load(), Unsent: t.unsent.Load(), Events: t.events.Load(), Dropped: t.dropped.Load(),
		Forgotten: t.forgotten.Load(), Replays: t.replays.Load(), Replayed: t.replayed.Load(), BadReplays: t.badReplays.Load(),
		KeyspaceResubscribed: t.resubscribed.Load()}
}
