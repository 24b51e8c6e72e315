package memdrv_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/memdrv"
)

func TestStoreSetObjectDelete(t *testing.T) {
	s := memdrv.NewStore()
	data := []byte("hello")
	s.Set("k", data)
	data[0] = 'j' // the store kept a copy

	got, ok := s.Object("k")
	require.True(t, ok)
	assert.Equal(t, []byte("hello"), got)
	got[0] = 'x' // and handed out a copy
	again, _ := s.Object("k")
	assert.Equal(t, []byte("hello"), again)

	assert.Equal(t, 1, s.Len())
	assert.Equal(t, int64(5), s.Bytes())

	s.Set("k", []byte("hi"))
	got, _ = s.Object("k")
	assert.Equal(t, []byte("hi"), got, "Set replaces")
	assert.Equal(t, int64(2), s.Bytes())

	s.Set("empty", nil)
	got, ok = s.Object("empty")
	require.True(t, ok, "an empty object is an object")
	assert.Empty(t, got)

	s.Delete("k")
	s.Delete("absent")
	_, ok = s.Object("k")
	assert.False(t, ok)
	assert.Equal(t, 1, s.Len())
	assert.Equal(t, int64(0), s.Bytes())
}

func TestStoreBeginWrite(t *testing.T) {
	tests := []struct {
		name      string
		before    []byte // a complete object before BeginWrite, if non-nil
		finish    []byte
		wantFound bool
	}{
		{"completes", nil, []byte("abc"), true},
		{"abandons", nil, nil, false},
		{"drops an earlier object, completes", []byte("old"), []byte("new!"), true},
		{"drops an earlier object, abandons", []byte("old"), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := memdrv.NewStore()
			if tt.before != nil {
				s.Set("k", tt.before)
			}
			finish := s.BeginWrite("k")
			_, ok := s.Object("k")
			assert.False(t, ok, "a key being written is not readable")
			assert.Equal(t, 0, s.Len())
			assert.Equal(t, int64(0), s.Bytes())

			finish(tt.finish)
			got, ok := s.Object("k")
			assert.Equal(t, tt.wantFound, ok)
			if tt.wantFound {
				assert.Equal(t, tt.finish, got)
				assert.Equal(t, int64(len(tt.finish)), s.Bytes())
			}
			finish([]byte("again")) // idempotent
			got2, ok2 := s.Object("k")
			assert.Equal(t, ok, ok2)
			assert.Equal(t, got, got2)
		})
	}
}

func TestStoreBeginWriteLosesItsKey(t *testing.T) {
	tests := []struct {
		name  string
		steal func(s *memdrv.Store)
		want  []byte // the object after the stale finish, nil for none
	}{
		{"deleted", func(s *memdrv.Store) { s.Delete("k") }, nil},
		{"set", func(s *memdrv.Store) { s.Set("k", []byte("set")) }, []byte("set")},
		{"begun again and completed", func(s *memdrv.Store) { s.BeginWrite("k")([]byte("second")) }, []byte("second")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := memdrv.NewStore()
			finish := s.BeginWrite("k")
			tt.steal(s)
			finish([]byte("stale"))
			got, ok := s.Object("k")
			if tt.want == nil {
				assert.False(t, ok)
				return
			}
			require.True(t, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}
