package memdrv

import (
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv/internal/rawmem"
)

// object is where an object's bytes lie: one slice on the Go heap, or
// chunks of a bounded store's memory, in order (the last one filled
// up to the object's size). A complete object is immutable; a get reads
// it only while it holds its entry (see Store.lookup).
type object struct {
	size   int64
	heap   []byte     // an object on the heap
	chunks []int32    // or its chunks of pool
	pool   *chunkPool // nil for an object on the heap
}

// inChunks reports whether the object lies in a bounded store's chunks
// (one of no bytes too): what eviction may take.
func (o object) inChunks() bool { return o.pool != nil }

// runs walks the object's bytes in order: each run of adjacent chunks
// is one slice (one copy), a heap object's bytes are one.
type runs struct {
	o    object
	left int64 // bytes not yet walked
	done bool  // a heap object walked
}

func (o object) runs() runs { return runs{o: o, left: o.size} }

// next returns the next run, nil once every byte was walked.
func (r *runs) next() []byte {
	if r.o.pool == nil {
		if r.done {
			return nil
		}
		r.done = true
		return r.o.heap
	}
	if r.left <= 0 || len(r.o.chunks) == 0 {
		return nil
	}
	first, n := r.o.chunks[0], 1
	for n < len(r.o.chunks) && r.o.chunks[n] == first+int32(n) {
		n++
	}
	r.o.chunks = r.o.chunks[n:]
	size := min(int64(n)*r.o.pool.size, r.left)
	r.left -= size
	off := int64(first) * r.o.pool.size
	return r.o.pool.bytes[off : off+size : off+size]
}

// fill copies the spans' bytes, in order, into the object's memory (the
// spans hold exactly size bytes).
func (o object) fill(spans []contract.Span) {
	r := o.runs()
	var dst []byte
	for _, s := range spans {
		src := rawmem.At(s.Addr, s.Len)
		for len(src) > 0 {
			if len(dst) == 0 {
				dst = r.next()
			}
			n := copy(dst, src)
			dst, src = dst[n:], src[n:]
		}
	}
}

// fillFrom copies data (exactly size bytes) into the object's memory.
func (o object) fillFrom(data []byte) {
	r := o.runs()
	for len(data) > 0 {
		n := copy(r.next(), data)
		data = data[n:]
	}
}

// readInto copies the object's first n bytes into the spans in order (n
// never exceeds the spans' total length).
func (o object) readInto(spans []contract.Span, n int64) {
	r := o.runs()
	var src []byte
	for _, s := range spans {
		dst := rawmem.At(s.Addr, min(s.Len, n))
		n -= int64(len(dst))
		for len(dst) > 0 {
			if len(src) == 0 {
				src = r.next()
			}
			k := copy(dst, src)
			dst, src = dst[k:], src[k:]
		}
		if n == 0 {
			return
		}
	}
}

// prefix returns a copy of the object's first n bytes.
func (o object) prefix(n int64) []byte {
	out := make([]byte, 0, n)
	r := o.runs()
	for int64(len(out)) < n {
		run := r.next()
		out = append(out, run[:min(int64(len(run)), n-int64(len(out)))]...)
	}
	return out
}

// bytes views the object as one slice: its own memory when that is one
// run (read-only, like the object), else a copy; nil for no object.
func (o object) bytes() []byte {
	if o.pool == nil {
		return o.heap
	}
	r := o.runs()
	if first := r.next(); first != nil && int64(len(first)) == o.size {
		return first
	}
	return o.prefix(o.size)
}
