package mooncakesdk

import (
	"runtime"
)

// cKeys is a call's keys as C strings: one buffer holding every key
// followed by a NUL byte, and the char* array pointing into it. Both are
// Go memory that lives for the call; the buffer is pinned, so the array
// may hold pointers into it under the cgo pointer rules (purego's). No C
// memory is allocated, so there is nothing to free.
type cKeys struct {
	buf    []byte
	ptrs   []*byte
	pinner runtime.Pinner
}

// newCKeys lays keys out for C. The keys must be non-empty and free of
// NUL bytes (CheckTransfer, CheckExist). Call release after the C call.
func newCKeys(keys []string) *cKeys {
	n := 0
	for _, k := range keys {
		n += len(k) + 1
	}
	ck := &cKeys{buf: make([]byte, n), ptrs: make([]*byte, len(keys))}
	off := 0
	for i, k := range keys {
		copy(ck.buf[off:], k)
		ck.ptrs[i] = &ck.buf[off]
		off += len(k) + 1 // the byte after each key stays 0
	}
	if n > 0 {
		ck.pinner.Pin(&ck.buf[0])
	}
	return ck
}

// release unpins the buffer; the C call that used it has returned.
func (ck *cKeys) release() {
	ck.pinner.Unpin()
	runtime.KeepAlive(ck.buf)
}
