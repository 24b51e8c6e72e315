package memdrv

import (
	"fmt"

	"github.com/kvshare/kvshare/hostmem"
)

// chunkPool is a bounded store's memory: one mapping taken up front
// outside the Go heap (package hostmem, every page faulted in), cut
// into chunks of one size. An object takes whole chunks, not
// necessarily adjacent ones, so the chunks any dropped object gives back
// serve an object of any size: eviction always makes room. It is
// guarded by the store's lock.
type chunkPool struct {
	mem   *hostmem.Memory // nil: a store of no chunks, or one closed
	bytes []byte          // the chunks, in order
	size  int64           // bytes of one chunk
	count int64           // chunks in all
	// free lists the chunks no object holds, the next to take last: a
	// fresh store hands chunks out in address order, and chunks given
	// back together are taken again together, so an object's chunks
	// are mostly adjacent and copied in one go.
	free []int32
}

// newChunkPool maps o's chunks, faulted in; a capacity of no chunk maps
// nothing.
func newChunkPool(o StoreOptions) (*chunkPool, error) {
	p := &chunkPool{size: o.chunkBytes(), count: o.chunks()}
	if p.count == 0 {
		return p, nil
	}
	m, err := hostmem.Map(hostmem.Geometry{SlotBytes: p.size, SlotCount: int(p.count)},
		hostmem.Options{HugePages: o.HugePages, Lock: o.Lock, Prefault: true})
	if err != nil {
		return nil, fmt.Errorf("memdrv: a bounded store of %d chunks of %d bytes: %w", p.count, p.size, err)
	}
	p.mem, p.bytes = m, m.Bytes(0)[:p.count*p.size]
	p.free = make([]int32, p.count)
	for i := range p.free {
		p.free[i] = int32(p.count - 1 - int64(i))
	}
	return p, nil
}

// chunksFor is the chunks an object of size bytes takes.
func (p *chunkPool) chunksFor(size int64) int64 { return (size + p.size - 1) / p.size }

// inUse is the chunks objects, puts under way and reads hold.
func (p *chunkPool) inUse() int64 { return p.count - int64(len(p.free)) }

// take hands out n free chunks (the caller made sure there are).
func (p *chunkPool) take(n int64) []int32 {
	out := make([]int32, n)
	top := len(p.free) - 1
	for i := range out {
		out[i] = p.free[top-i]
	}
	p.free = p.free[:len(p.free)-int(n)]
	return out
}

// give takes chunks back, so that a later take of as many hands them
// out in the same order.
func (p *chunkPool) give(chunks []int32) {
	for i := len(chunks) - 1; i >= 0; i-- {
		p.free = append(p.free, chunks[i])
	}
}

// close unmaps the memory; the pool then holds no chunk. Nothing may
// hold a chunk (the store checked).
func (p *chunkPool) close() error {
	if p.mem == nil {
		return nil
	}
	if err := p.mem.Free(); err != nil {
		return fmt.Errorf("memdrv: closing a bounded store: %w", err)
	}
	p.mem, p.bytes, p.free, p.count = nil, nil, nil, 0
	return nil
}
