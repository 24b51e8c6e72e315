package diskdrv

import (
	"bytes"
	"log/slog"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// lent is page-aligned memory outside the Go heap, as an engine lends.
type lent struct{ mem []byte }

func lend(t testing.TB, n int) *lent {
	mem, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	return &lent{mem: mem}
}

// span is n bytes of the memory from off.
func (l *lent) span(off, n int) []contract.Span {
	return []contract.Span{{Addr: uintptr(unsafe.Pointer(&l.mem[off])), Len: int64(n)}}
}

// pattern is the bytes an object of key holds in the tests: n bytes
// that depend on the key and the offset.
func pattern(key string, n int) []byte {
	b := make([]byte, n)
	h := uint32(2166136261)
	for i := range len(key) {
		h = (h ^ uint32(key[i])) * 16777619
	}
	for i := range b {
		h = h*1664525 + 1013904223
		b[i] = byte(h >> 24)
	}
	return b
}

// open opens a store in dir with a quiet logger.
func open(t testing.TB, dir string, o Options) *Store {
	o.Logger = slog.New(slog.DiscardHandler)
	s, err := Open(dir, o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// putRow puts data under key from lent memory as a driver's row does.
func putRow(s *Store, l *lent, key string, data []byte, direct bool) contract.RowStatus {
	copy(l.mem, data)
	r := row{s: s, dir: contract.PutDir, key: key, spans: l.span(0, len(data))}
	r.direct = direct && s.direct && aligned(r.spans)
	r.ask(Begin)
	return r.put()
}

// getRow gets key into the head of the lent memory (cleared first).
func getRow(s *Store, l *lent, key string, n int, direct bool) contract.RowStatus {
	clear(l.mem[:n])
	r := row{s: s, dir: contract.GetDir, key: key, spans: l.span(0, n)}
	r.direct = direct && s.direct && aligned(r.spans)
	r.ask(Begin)
	return r.get()
}

// holds says whether the head of the memory holds data.
func (l *lent) holds(data []byte) bool { return bytes.Equal(l.mem[:len(data)], data) }
