package events

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
)

// ErrReplayRequest is wrapped by the error of a replay request the node
// cannot read; the error names what was wrong.
var ErrReplayRequest = errors.New("kvshare/events: bad replay request")

// MaxTopicBytes is the longest topic a replay request may name.
const MaxTopicBytes = 64

// replayRequest is what a subscriber asked the replay socket: the
// batches of topic from sequence start on.
type replayRequest struct {
	peer      []byte // the ROUTER's routing id of the asker
	delimited bool   // the request came with an empty delimiter frame (REQ, or a DEALER that sends one): the reply carries one too
	start     uint64
	topic     string
	named     bool // the request named its topic
}

// parseReplay reads a request as the ROUTER socket received it: the
// peer's routing id, an empty delimiter (sent by a REQ socket, and by a
// DEALER that mimics one), the start sequence as 8 big-endian bytes
// (vLLM's request), then optionally the topic whose batches are asked
// for (this node's extension: its sequences are per topic).
func parseReplay(frames [][]byte) (replayRequest, error) {
	var r replayRequest
	if len(frames) == 0 {
		return r, fmt.Errorf("%w: no frames", ErrReplayRequest)
	}
	r.peer, frames = frames[0], frames[1:]
	if len(frames) > 0 && len(frames[0]) == 0 {
		r.delimited, frames = true, frames[1:]
	}
	switch {
	case len(frames) == 0:
		return r, fmt.Errorf("%w: no start sequence frame", ErrReplayRequest)
	case len(frames) > 2:
		return r, fmt.Errorf("%w: %d frames after the delimiter, want the start sequence and at most a topic", ErrReplayRequest, len(frames))
	case len(frames[0]) != SeqBytes:
		return r, fmt.Errorf("%w: a start sequence of %d bytes, want %d (big-endian)", ErrReplayRequest, len(frames[0]), SeqBytes)
	}
	r.start = binary.BigEndian.Uint64(frames[0])
	if r.start > 1<<63-1 {
		return r, fmt.Errorf("%w: start sequence %d is negative as a signed 64-bit integer", ErrReplayRequest, int64(r.start))
	}
	if len(frames) == 2 {
		if n := len(frames[1]); n > MaxTopicBytes {
			return r, fmt.Errorf("%w: a topic of %d bytes, over the limit of %d", ErrReplayRequest, n, MaxTopicBytes)
		}
		r.topic, r.named = string(frames[1]), true
	}
	return r, nil
}

// sent is one batch as it went out: its topic, sequence and payload.
type sent struct {
	topic   string
	seq     uint64
	payload []byte
}

// replayBuffer keeps the last batches sent, every topic together, for
// the replay socket. Safe for concurrent use.
type replayBuffer struct {
	mu     sync.Mutex
	ring   []sent
	next   int  // where the next batch goes
	full   bool // ring has wrapped
	topics map[string]struct{}
}

func newReplayBuffer(batches int) *replayBuffer {
	return &replayBuffer{ring: make([]sent, batches), topics: map[string]struct{}{}}
}

func (b *replayBuffer) add(s sent) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ring[b.next] = s
	b.next++
	if b.next == len(b.ring) {
		b.next, b.full = 0, true
	}
	b.topics[s.topic] = struct{}{}
}

// since returns topic's batches kept from start on, oldest first. A
// request that named no topic means the node's only topic; when it has
// published more than one (or none), there is no answer and ok is
// false.
func (b *replayBuffer) since(r replayRequest) (out []sent, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	topic := r.topic
	if !r.named {
		if len(b.topics) != 1 {
			return nil, false
		}
		for t := range b.topics {
			topic = t
		}
	}
	n := b.next
	if b.full {
		n = len(b.ring)
	}
	first := 0
	if b.full {
		first = b.next
	}
	for i := range n {
		s := b.ring[(first+i)%len(b.ring)]
		if s.topic == topic && s.seq >= r.start {
			out = append(out, s)
		}
	}
	return out, true
}
