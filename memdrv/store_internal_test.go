package memdrv

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// The driver's side of the store: a put reserves, then commits or
// abandons. These paths race with test staging in real use, so they are
// checked here step by step.
func TestStoreReserveCommitAbandon(t *testing.T) {
	tests := []struct {
		name       string
		between    func(s *Store) // after reserve, before the end
		abandon    bool
		wantCommit bool
		want       []byte // object under "k" at the end; nil for none
	}{
		{name: "commits", wantCommit: true, want: []byte("data")},
		{name: "abandons", abandon: true},
		{name: "deleted meanwhile", between: func(s *Store) { s.Delete("k") }},
		{name: "set meanwhile", between: func(s *Store) { s.Set("k", []byte("other")) }, want: []byte("other")},
		{name: "set meanwhile, then abandoned", between: func(s *Store) { s.Set("k", []byte("other")) }, abandon: true, want: []byte("other")},
		{name: "taken over by another writer", between: func(s *Store) { s.BeginWrite("k")([]byte("theirs")) }, want: []byte("theirs")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStore()
			s.SetCapacity(10)
			w, verdict := s.reserve("k", 4)
			require.NotNil(t, w)
			require.Equal(t, contract.Pending, verdict)
			_, _, st := s.lookup("k")
			assert.Equal(t, contract.NotReady, st, "a key being put is not ready")
			w2, verdict := s.reserve("k", 4)
			assert.Nil(t, w2)
			assert.Equal(t, contract.NotReady, verdict)
			_, verdict = s.reserve("other", 7)
			assert.Equal(t, contract.Declined, verdict, "the reservation counts against the capacity")

			if tt.between != nil {
				tt.between(s)
			}
			if tt.abandon {
				s.abandon(w)
			} else {
				w.obj.heap = []byte("data") // what the put copied
				assert.Equal(t, tt.wantCommit, s.commit(w))
			}
			assert.False(t, s.commit(w), "a write ends once")
			s.abandon(w) // and abandoning after the end does nothing

			got, ok := s.Object("k")
			assert.Equal(t, tt.want != nil, ok)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, int64(len(tt.want)), s.Bytes(), "used bytes")
			assert.Zero(t, s.reserved, "the reservation was released")
		})
	}
}

// A new entry keeps its own copy of the key: a driver's keys are strings
// over one buffer per operation, and a stored object must neither pin
// that buffer nor change when its bytes do. (A key string over a buffer
// written later breaks Go's rules; here it shows whether the store
// copied.)
func TestStoreKeepsItsOwnKeys(t *testing.T) {
	for name, stage := range map[string]func(s *Store, key string){
		"reserve":    func(s *Store, key string) { _, _ = s.reserve(key, 1) },
		"Set":        func(s *Store, key string) { s.Set(key, []byte("x")) },
		"BeginWrite": func(s *Store, key string) { s.BeginWrite(key) },
	} {
		t.Run(name, func(t *testing.T) {
			s := NewStore()
			buf := []byte("ns/abc")
			stage(s, unsafe.String(unsafe.SliceData(buf), len(buf)))
			copy(buf, "XXXXXX")
			_, ok := s.entries["ns/abc"]
			assert.True(t, ok, "the entry is found under the key as it was given")
			assert.Len(t, s.entries, 1)
		})
	}
}
