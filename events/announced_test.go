package events

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvshare/kvshare/keys"
)

// The announced set holds at most its bound: the oldest announcement is
// forgotten, a removed block frees its place, and a block announced
// again after its removal is not forgotten in its old place's turn.
func TestAnnouncedBound(t *testing.T) {
	a := newAnnounced(3)
	id := func(name string) uint64 { return a.id("topic", []byte(name)) }
	for i := range 3 {
		assert.False(t, a.add(id(fmt.Sprint(i))))
	}
	assert.False(t, a.add(id("1")), "announced again: nothing new")
	assert.True(t, a.add(id("3")), "past the bound the oldest goes")
	assert.False(t, a.remove(id("0")), "forgotten: its absence is not announced")
	assert.True(t, a.remove(id("1")))
	assert.False(t, a.remove(id("1")), "removed once")
	assert.False(t, a.add(id("1")), "its old place is reused: 2, 3, 1 fit")
	assert.Equal(t, 3, a.len())
	assert.True(t, a.add(id("4")), "2 is the oldest now")
	assert.False(t, a.remove(id("2")))
	assert.True(t, a.remove(id("1")), "1, announced again, kept its new place")
	assert.True(t, a.remove(id("3")))
	assert.True(t, a.remove(id("4")))
	assert.Zero(t, a.len())
	assert.NotEqual(t, a.id("t1", []byte("n")), a.id("t2", []byte("n")), "a block's topic is part of it")
	assert.NotEqual(t, a.id("t", []byte("1n")), a.id("t1", []byte("n")), "topic and name do not run together")
}

// A hook call that finds the queue full is dropped and counted, never
// waited for.
func TestOfferDropsWhenFull(t *testing.T) {
	p := &Publisher{in: make(chan note, 2)} // no goroutine reads it
	for range 5 {
		p.Stored(keys.Scope{}, keys.ScopeDigest{}, [][]byte{[]byte("n")})
	}
	assert.Equal(t, int64(3), p.Stats().Dropped)
	assert.Len(t, p.in, 2)
}
