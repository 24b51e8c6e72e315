package node

import (
	"sync"

	"github.com/kvshare/kvshare/nodewire"
)

// outFrame is one frame waiting for the engine: the request it answers
// (0 for the node's goodbye) and the message, or the rest of a frame a
// direct write began (rest set, m nil).
type outFrame struct {
	request uint64
	m       nodewire.Message
	rest    []byte
}

// frameWriter is the engine's connection as the outbox writes it.
type frameWriter interface {
	WriteFrame(request uint64, m nodewire.Message, fd int) error
	TryWriteFrame(request uint64, m nodewire.Message) (rest []byte, err error)
	WriteRest(rest []byte) error
}

// outbox is an engine's bounded queue of outgoing frames. Anyone may
// post, and a post never blocks: when nothing is queued or being written
// the poster writes its frame at once, with one write the socket takes
// without waiting (no hand-off to another goroutine on the common path:
// an outcome leaves from the goroutine that learned it); what the socket
// does not take, and every frame posted while another is queued or being
// written, waits in the queue for the writer goroutine (run), in order. A
// queue that is full means the engine stopped reading, and the post says
// so (the caller disconnects it). After seal, posts are dropped.
type outbox struct {
	w     frameWriter
	limit int

	mu      sync.Mutex
	q       []outFrame
	writing bool // a write is under way, the writer's or a poster's
	sealed  bool
	full    bool  // a post found the queue full: the engine is a slow reader
	err     error // the first failed write: the rest is dropped
	wake    chan struct{}
}

func newOutbox(frames int, w frameWriter) *outbox {
	return &outbox{w: w, limit: frames, wake: make(chan struct{}, 1)}
}

// post sends m as the answer to request, at once or through the queue.
// It returns false when the queue was full (the first such post marks
// the outbox full and seals it) or already sealed; the frame is dropped
// then.
func (o *outbox) post(request uint64, m nodewire.Message) (queued bool) {
	o.mu.Lock()
	if o.sealed {
		o.mu.Unlock()
		return false
	}
	if o.writing || len(o.q) > 0 {
		defer o.mu.Unlock()
		return o.queueLocked(outFrame{request: request, m: m})
	}
	o.writing = true
	o.mu.Unlock()
	rest, err := o.w.TryWriteFrame(request, m)
	o.mu.Lock()
	o.writing = false
	switch {
	case err != nil:
		o.failLocked(err)
	case rest != nil:
		// The rest goes first: the frames queued meanwhile follow it.
		o.q = append([]outFrame{{request: request, rest: rest}}, o.q...)
	}
	if len(o.q) > 0 || o.sealed {
		o.signal() // the writer has work, or may stop: nothing else wakes it
	}
	o.mu.Unlock()
	return err == nil
}

// queueLocked appends f, or marks the outbox full and seals it.
func (o *outbox) queueLocked(f outFrame) bool {
	if len(o.q) >= o.limit {
		o.full, o.sealed = true, true
		o.signal()
		return false
	}
	o.q = append(o.q, f)
	o.signal()
	return true
}

// failLocked records the first failed write and drops what is queued.
func (o *outbox) failLocked(err error) {
	if o.err == nil {
		o.err = err
	}
	o.sealed, o.q = true, nil
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
	if m != nil && len(o.q) < o.limit {
		o.q = append(o.q, outFrame{request: request, m: m})
		queued = true
	}
	o.sealed = true
	o.signal()
	return queued
}

// slow reports whether a post found the queue full.
func (o *outbox) slow() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.full
}

func (o *outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// run writes the queued frames, each once no other write is under way,
// until the outbox is sealed and empty with no write under way, or a
// write fails (the rest is dropped). It returns the first failed write's
// error, a poster's included.
func (o *outbox) run() error {
	for {
		o.mu.Lock()
		for o.writing || len(o.q) == 0 {
			if !o.writing && o.sealed {
				err := o.err
				o.mu.Unlock()
				return err
			}
			o.mu.Unlock()
			<-o.wake
			o.mu.Lock()
		}
		f := o.q[0]
		o.q[0] = outFrame{}
		o.q = o.q[1:]
		o.writing = true
		o.mu.Unlock()
		var err error
		if f.rest != nil {
			err = o.w.WriteRest(f.rest)
		} else {
			err = o.w.WriteFrame(f.request, f.m, -1)
		}
		o.mu.Lock()
		o.writing = false
		if err != nil {
			o.failLocked(err)
		}
		o.mu.Unlock()
	}
}
