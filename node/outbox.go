package node

import (
	"sync"

	"github.com/kvshare/kvshare/nodewire"
)

// outFrame is one frame waiting for the engine: the request it answers
// (0 for the node's goodbye) and the message.
type outFrame struct {
	request uint64
	m       nodewire.Message
}

// outbox is an engine's bounded queue of outgoing frames, written by
// one writer goroutine (run). Anyone may post; a post never blocks: a
// queue that is full means the engine stopped reading, and the post
// says so (the caller disconnects it). After seal, posts are dropped.
type outbox struct {
	mu     sync.Mutex
	q      chan outFrame
	sealed bool
	full   bool // a post found the queue full: the engine is a slow reader
}

func newOutbox(frames int) *outbox { return &outbox{q: make(chan outFrame, frames)} }

// post queues m as the answer to request. It returns false when the
// queue was full (the first such post marks the outbox full and seals
// it) or already sealed; the frame is dropped then.
func (o *outbox) post(request uint64, m nodewire.Message) (queued bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sealed {
		return false
	}
	select {
	case o.q <- outFrame{request, m}:
		return true
	default:
		o.full = true
		o.sealed = true
		close(o.q)
		return false
	}
}

// last queues m, when there is room, as the last frame, and seals the
// outbox: the writer writes what is queued, m last, and stops. It
// reports whether m was queued.
func (o *outbox) last(request uint64, m nodewire.Message) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sealed {
		return false
	}
	queued := false
	if m != nil {
		select {
		case o.q <- outFrame{request, m}:
			queued = true
		default:
		}
	}
	o.sealed = true
	close(o.q)
	return queued
}

// slow reports whether a post found the queue full.
func (o *outbox) slow() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.full
}

// run writes the queued frames with write until the outbox is sealed and
// empty, or a write fails (the rest is dropped). It returns the first
// write error, if any.
func (o *outbox) run(write func(outFrame) error) error {
	for f := range o.q {
		if err := write(f); err != nil {
			o.last(0, nil)
			for range o.q { // drop the rest
			}
			return err
		}
	}
	return nil
}
