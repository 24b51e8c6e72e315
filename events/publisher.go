package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/kvshare/kvshare/keys"
)

// UnscopedTopic is the topic of the blocks of sessions that declared no
// scope; every other topic is a scope's digest in lowercase hex.
const UnscopedTopic = "unscoped"

// coalesce bounds the hook calls one pass over the queue gathers into
// its batches.
const coalesce = 1024

// Publisher publishes what a node learns about blocks as vLLM KV events:
// it implements node.Events. Its methods never block: each hands a note
// to the publisher's goroutine through a bounded queue, or drops it and
// counts. Close it once the node is shut down.
type Publisher struct {
	cfg    Config
	log    *slog.Logger
	pub    zmq4.Socket
	router zmq4.Socket // nil: no replay socket
	in     chan note
	enc    batchEncoder
	buf    *replayBuffer
	stop   context.CancelFunc
	done   sync.WaitGroup
	closed atomic.Bool
	tally  tally

	// The goroutine's own.
	seqs  map[string]uint64
	known *announced
}

// noteKind says what a node learned.
type noteKind uint8

const (
	noteStored noteKind = iota
	noteAbsent
	noteEvicted
)

// note is one hook call, as the queue carries it.
type note struct {
	kind   noteKind
	scope  keys.Scope
	digest keys.ScopeDigest
	names  [][]byte
	key    string // noteEvicted: the store key
	// flushed, when set, is closed once every note before this one is
	// published ([Publisher.Flush]).
	flushed chan struct{}
}

// Open binds the sockets of cfg and starts publishing.
func Open(cfg Config) (*Publisher, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	zlog := slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug)
	p := &Publisher{cfg: cfg, log: cfg.Logger, in: make(chan note, cfg.Queue), stop: stop,
		enc: batchEncoder{medium: cfg.Medium, rank: uint64(cfg.DataParallelRank)},
		buf: newReplayBuffer(cfg.ReplayBatches), seqs: map[string]uint64{}, known: newAnnounced(cfg.Announced)}
	p.pub = zmq4.NewPub(ctx, zmq4.WithLogger(zlog))
	if err := p.pub.SetOption(zmq4.OptionHWM, cfg.HWM); err != nil {
		stop()
		return nil, fmt.Errorf("kvshare/events: the PUB socket's HWM: %w", err)
	}
	if err := p.pub.Listen(cfg.Endpoint); err != nil {
		stop()
		_ = p.pub.Close()
		return nil, fmt.Errorf("kvshare/events: Endpoint %q: %w", cfg.Endpoint, err)
	}
	if cfg.ReplayEndpoint != "" {
		p.router = zmq4.NewRouter(ctx, zmq4.WithLogger(zlog))
		if err := p.router.Listen(cfg.ReplayEndpoint); err != nil {
			stop()
			_ = p.pub.Close()
			_ = p.router.Close()
			return nil, fmt.Errorf("kvshare/events: ReplayEndpoint %q: %w", cfg.ReplayEndpoint, err)
		}
		p.done.Add(1)
		go p.serveReplays()
	}
	p.done.Add(1)
	go p.run(ctx)
	return p, nil
}

// Endpoint is the address the PUB socket is bound to, as a subscriber
// dials it ("tcp://127.0.0.1:40123").
func (p *Publisher) Endpoint() string { return "tcp://" + p.pub.Addr().String() }

// ReplayEndpoint is the address the replay socket is bound to; "" when
// there is none.
func (p *Publisher) ReplayEndpoint() string {
	if p.router == nil {
		return ""
	}
	return "tcp://" + p.router.Addr().String()
}

// Stored is told a publish's rows ended Ready under names: BlockStored
// on the scope's topic.
func (p *Publisher) Stored(scope keys.Scope, digest keys.ScopeDigest, names [][]byte) {
	p.offer(note{kind: noteStored, scope: scope, digest: digest, names: names})
}

// Absent is told a lookup or fetch found names absent: BlockRemoved for
// those the publisher announced stored.
func (p *Publisher) Absent(scope keys.Scope, digest keys.ScopeDigest, names [][]byte) {
	p.offer(note{kind: noteAbsent, scope: scope, digest: digest, names: names})
}

// Evicted is told the store dropped key (a store key, as [keys.Stem.Key]
// builds it): BlockRemoved when the publisher announced its block.
func (p *Publisher) Evicted(key string) {
	p.offer(note{kind: noteEvicted, key: key})
}

func (p *Publisher) offer(n note) {
	if p.closed.Load() {
		p.tally.dropped.Add(1)
		return
	}
	select {
	case p.in <- n:
	default:
		p.tally.dropped.Add(1)
	}
}

// Flush returns once every call made before it is published (sent on
// the PUB socket and kept for replay), or with ctx's error. It waits for
// room in the queue; the node never calls it.
func (p *Publisher) Flush(ctx context.Context) error {
	n := note{flushed: make(chan struct{})}
	select {
	case p.in <- n:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-n.flushed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops publishing and closes the sockets; notes still queued are
// dropped and counted.
func (p *Publisher) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	p.stop()
	err := p.pub.Close()
	if p.router != nil {
		err = errors.Join(err, p.router.Close())
	}
	p.done.Wait()
	p.tally.dropped.Add(int64(len(p.in)))
	return err
}

// run publishes the queue's notes once a window, a batch per topic for
// each coalesce of them, until Close. It waits on the clock, never on
// the queue: a hook call wakes no one, so a publish pays a channel send
// and no more.
func (p *Publisher) run(ctx context.Context) {
	defer p.done.Done()
	tick := time.NewTicker(p.cfg.Window)
	defer tick.Stop()
	gathered := make([]note, 0, coalesce)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for len(p.in) > 0 {
			gathered = gathered[:0]
		more:
			for len(gathered) < coalesce {
				select {
				case n := <-p.in:
					gathered = append(gathered, n)
				default:
					break more
				}
			}
			p.publish(gathered)
			clear(gathered)
		}
	}
}

// publish turns notes into one batch per topic, in the order the topics
// first appear, and sends each.
func (p *Publisher) publish(notes []note) {
	var topics []string
	byTopic := map[string][]event{}
	add := func(topic string, ev event) {
		evs, seen := byTopic[topic]
		if !seen {
			topics = append(topics, topic)
			if _, published := p.seqs[topic]; !published {
				// The node cannot enumerate its store: whatever a router
				// believed about this topic before this node ran is unknown.
				evs = append(evs, event{tag: TagAllBlocksCleared})
				p.tally.events.Add(1)
			}
		}
		byTopic[topic] = append(evs, ev)
		p.tally.events.Add(1)
	}
	var flushed []chan struct{}
	defer func() {
		for _, f := range flushed {
			close(f)
		}
	}()
	for _, n := range notes {
		if n.flushed != nil {
			flushed = append(flushed, n.flushed)
			continue
		}
		switch n.kind {
		case noteStored:
			topic := topicOf(n.scope, n.digest)
			for _, name := range n.names {
				if p.known.add(p.known.id(topic, name)) {
					p.tally.forgotten.Add(1)
				}
			}
			add(topic, event{tag: TagBlockStored, names: n.names, blockSize: uint64(n.scope.TokensPerBlock), loraName: n.scope.Adapter})
		case noteAbsent:
			topic := topicOf(n.scope, n.digest)
			if gone := p.forget(topic, n.names); len(gone) > 0 {
				add(topic, event{tag: TagBlockRemoved, names: gone})
			}
		case noteEvicted:
			stem, name, err := keys.ParseKey(n.key)
			if err != nil {
				continue // not a key of kvshare's
			}
			topic := UnscopedTopic
			if d, ok := stem.Scope(); ok {
				topic = d.String()
			}
			if gone := p.forget(topic, [][]byte{name}); len(gone) > 0 {
				add(topic, event{tag: TagBlockRemoved, names: gone})
			}
		}
	}
	ts := float64(time.Now().UnixNano()) / 1e9
	for _, topic := range topics {
		p.send(topic, ts, byTopic[topic])
	}
}

// forget returns the names of topic that were announced, forgetting
// them.
func (p *Publisher) forget(topic string, names [][]byte) [][]byte {
	var gone [][]byte
	for _, name := range names {
		if p.known.remove(p.known.id(topic, name)) {
			gone = append(gone, name)
		}
	}
	return gone
}

// send encodes and publishes one batch on topic with the topic's next
// sequence, and keeps it for replay.
func (p *Publisher) send(topic string, ts float64, evs []event) {
	payload, err := p.enc.encode(nil, ts, evs)
	if err != nil {
		p.log.Error("kvshare/events: a batch not encoded", "topic", topic, "err", err)
		return
	}
	seq := p.seqs[topic]
	p.seqs[topic] = seq + 1
	p.buf.add(sent{topic: topic, seq: seq, payload: payload})
	if err := p.pub.SendMulti(zmq4.NewMsgFrom([]byte(topic), seqFrame(seq), payload)); err != nil {
		p.tally.unsent.Add(1)
		p.log.Debug("kvshare/events: a batch not sent (kept for replay)", "topic", topic, "seq", seq, "err", err)
	}
	p.tally.batches.Add(1)
}

// topicOf is a scope's topic: its digest in hex, or UnscopedTopic.
func topicOf(scope keys.Scope, digest keys.ScopeDigest) string {
	if scope.IsZero() {
		return UnscopedTopic
	}
	return digest.String()
}
