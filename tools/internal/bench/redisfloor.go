package bench

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/redisdrv"
	"github.com/kvshare/kvshare/tools/internal/poolfloor"
)

// redisFloor is measurement 7's floor: the commands the Redis driver
// sends, and nothing else, by as many bare goroutines as the driver has
// workers, each sending one part at a time and reading every reply: one
// pipeline (DoMultiStream), or on a cluster one a node the part's rows
// lie on, sent at once (the first on the goroutine itself), as the
// driver sends them. Keys, and which node each lies on, are found before
// the clock starts; the commands are built inside it, as the driver
// builds them.
type redisFloor struct {
	nodes   *redisNodes
	workers int
	// callTimeout bounds one part's round trip as the driver's does: the
	// store file's call_timeout, or 0 for the driver's derived bound.
	callTimeout time.Duration
}

// redisPart is one pipeline's rows: their keys and slots, and the node
// (index into redisNodes) they lie on.
type redisPart struct {
	keys  []string
	slots [][]byte
	bytes int64
	node  int
}

// redisParts cuts rows [0, len(keys)) as kvshare cuts them: into views of
// viewRows rows, each cut into parts as the driver cuts a call (at most
// rowsPerCall rows and bytesPerCall bytes, one larger row alone).
func redisParts(keys []string, slots [][]byte, rowBytes int64, viewRows, rowsPerCall int, bytesPerCall int64) []redisPart {
	per := poolfloor.Cut(rowBytes, rowsPerCall, bytesPerCall)
	var parts []redisPart
	for vlo := 0; vlo < len(keys); vlo += viewRows {
		vhi := min(vlo+viewRows, len(keys))
		for lo := vlo; lo < vhi; lo += per {
			hi := min(lo+per, vhi)
			parts = append(parts, redisPart{keys: keys[lo:hi], slots: slots[lo:hi], bytes: int64(hi-lo) * rowBytes})
		}
	}
	return parts
}

// run sends every part (each its pipelines, one a node) in direction
// dir on the floor's goroutines (each taking the next part when its last
// is done) and returns the rows that came back Ready: a put whose SET NX
// answered OK (or nil with STRLEN the row's length), a get whose value
// filled its slot exactly.
func (f *redisFloor) run(dir contract.Direction, parts [][]redisPart) int {
	next := make(chan []redisPart, len(parts))
	for _, p := range parts {
		next <- p
	}
	close(next)
	var ready atomic.Int64
	var wg sync.WaitGroup
	for range f.workers {
		wg.Go(func() {
			n := 0
			for p := range next {
				n += f.part(dir, p)
			}
			ready.Add(int64(n))
		})
	}
	wg.Wait()
	return int(ready.Load())
}

// part sends one part's pipelines, the first on this goroutine and the
// others on goroutines of their own, and returns once all returned: the
// rows that came back Ready.
func (f *redisFloor) part(dir contract.Direction, pipelines []redisPart) int {
	one := func(p *redisPart) int {
		if dir == contract.PutDir {
			return f.put(p)
		}
		return f.get(p)
	}
	if len(pipelines) == 1 {
		return one(&pipelines[0])
	}
	var ready atomic.Int64
	var wg sync.WaitGroup
	for i := range pipelines[1:] {
		wg.Go(func() { ready.Add(int64(one(&pipelines[i+1]))) })
	}
	n := one(&pipelines[0])
	wg.Wait()
	return n + int(ready.Load())
}

// put sends SET key value NX and STRLEN key for each row of p in one
// pipeline to p's node, each value the slot's own bytes (no copy).
func (f *redisFloor) put(p *redisPart) int {
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout(p.bytes))
	defer cancel()
	client := f.nodes.clients[p.node]
	cmds := make(rueidis.Commands, 0, 2*len(p.keys))
	for i, k := range p.keys {
		s := p.slots[i]
		cmds = append(cmds,
			client.B().Set().Key(k).Value(unsafe.String(unsafe.SliceData(s), len(s))).Nx().Build(),
			client.B().Strlen().Key(k).Build())
	}
	stream := client.DoMultiStream(ctx, cmds...)
	var set, strlen textSink
	var length [20]byte
	ready := 0
	for i := range p.keys {
		set.n, strlen.n = 0, 0
		_, serr := stream.WriteTo(&set)
		_, lerr := stream.WriteTo(&strlen)
		switch {
		case serr == nil && set.is([]byte("OK")):
			ready++
		case rueidis.IsRedisNil(serr) && lerr == nil && strlen.is(strconv.AppendInt(length[:0], int64(len(p.slots[i])), 10)):
			ready++
		}
	}
	drainStream(&stream)
	return ready
}

// get sends GET key for each row of p in one pipeline to p's node and
// streams each value straight into its slot.
func (f *redisFloor) get(p *redisPart) int {
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout(p.bytes))
	defer cancel()
	client := f.nodes.clients[p.node]
	cmds := make(rueidis.Commands, 0, len(p.keys))
	for _, k := range p.keys {
		cmds = append(cmds, client.B().Get().Key(k).Build())
	}
	stream := client.DoMultiStream(ctx, cmds...)
	var sink slotSink
	ready := 0
	for i := range p.keys {
		sink.slot, sink.written = p.slots[i], 0
		if _, err := stream.WriteTo(&sink); err == nil && sink.written == len(sink.slot) {
			ready++
		}
	}
	drainStream(&stream)
	return ready
}

// timeout bounds the round trip of a part of bytes bytes, as the driver
// bounds its own.
func (f *redisFloor) timeout(bytes int64) time.Duration {
	if f.callTimeout > 0 {
		return f.callTimeout
	}
	return redisdrv.DerivedTimeout(bytes)
}

// drainStream reads the replies a stream still holds, so that its
// connection goes back to the client (none are left when every row read
// its own).
func drainStream(s *rueidis.MultiRedisResultStream) {
	var t textSink
	for s.HasNext() {
		t.n = 0
		_, _ = s.WriteTo(&t)
	}
}

// textSink takes a short reply (OK, an integer) into a fixed buffer.
type textSink struct {
	buf [64]byte
	n   int
}

// is reports whether the reply's text is want.
func (t *textSink) is(want []byte) bool { return bytes.Equal(t.buf[:t.n], want) }

// Write takes a reply's text; a longer one is cut.
func (t *textSink) Write(b []byte) (int, error) {
	t.n += copy(t.buf[t.n:], b)
	return len(b), nil
}

// ReadFrom takes a bulk string reply's bytes (the client hands them as
// a reader), at most the buffer's.
func (t *textSink) ReadFrom(r io.Reader) (int64, error) {
	n, err := io.ReadFull(r, t.buf[t.n:])
	t.n += n
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return int64(n), err
}

// slotSink is where the floor's get lands: the slot, written in place.
// A value longer than the slot writes nothing.
type slotSink struct {
	slot    []byte
	written int
}

// ReadFrom reads one value (the client hands it as an *io.LimitedReader
// of its length) into the slot.
func (s *slotSink) ReadFrom(r io.Reader) (int64, error) {
	lr, ok := r.(*io.LimitedReader)
	if !ok || s.written+int(lr.N) > len(s.slot) {
		return 0, io.ErrShortBuffer
	}
	n, err := io.ReadFull(lr, s.slot[s.written:s.written+int(lr.N)])
	s.written += n
	return int64(n), err
}

// Write refuses a reply that is not a value.
func (s *slotSink) Write([]byte) (int, error) { return 0, io.ErrShortWrite }
