package mooncakesdk

import (
	"runtime"
	"sync"
)

// cKeys is a call's keys as C strings: the [KeyList]'s own buffer, which
// already holds every key followed by a NUL byte, pinned for the call,
// and the char* array pointing into it. Both are Go memory; the buffer
// is pinned, so the array may hold pointers into it under the cgo
// pointer rules (purego's). No C memory is allocated, so there is
// nothing to free. cKeys come from a pool and go back to it with their
// array, so a call allocates no array once the pool holds one as long.
type cKeys struct {
	ptrs   []*byte
	pinner runtime.Pinner
}

var cKeysPool = sync.Pool{New: func() any { return new(cKeys) }}

// pinKeys lays l out for C: pins its buffer and points the array at
// each key. l is not empty. Call release after the C call.
func pinKeys(l *KeyList) *cKeys {
	ck := cKeysPool.Get().(*cKeys)
	n := l.Len()
	if cap(ck.ptrs) < n {
		ck.ptrs = make([]*byte, n)
	}
	ck.ptrs = ck.ptrs[:n]
	ck.pinner.Pin(&l.buf[0])
	for i, off := range l.offs {
		ck.ptrs[i] = &l.buf[off]
	}
	return ck
}

// release unpins the buffer (the C call that used it has returned),
// drops the array's pointers into it, and returns ck to the pool.
func (ck *cKeys) release() {
	ck.pinner.Unpin()
	clear(ck.ptrs)
	ck.ptrs = ck.ptrs[:0]
	cKeysPool.Put(ck)
}

// putCodes is a put's per-key answers as the library writes them (C
// int), pooled like cKeys.
type putCodes struct{ codes []int32 }

var putCodesPool = sync.Pool{New: func() any { return new(putCodes) }}

// getPutCodes returns n codes from the pool; give them back with put.
func getPutCodes(n int) *putCodes {
	pc := putCodesPool.Get().(*putCodes)
	if cap(pc.codes) < n {
		pc.codes = make([]int32, n)
	}
	pc.codes = pc.codes[:n]
	return pc
}

func (pc *putCodes) put() { putCodesPool.Put(pc) }

// keyListPool holds the KeyLists the string-keyed calls pack into.
var keyListPool = sync.Pool{New: func() any { return new(KeyList) }}
