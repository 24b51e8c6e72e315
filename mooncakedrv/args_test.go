package mooncakedrv

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A store call's arguments are kept for the next call, whichever worker
// gave them back, up to a bound; those that served a huge call are not.
func TestArgsAreKeptForTheNextCall(t *testing.T) {
	var s store
	a := s.takeArgs()
	done := make(chan struct{})
	go func() { s.keepArgs(a); close(done) }()
	<-done
	assert.Same(t, a, s.takeArgs(), "kept, found from another goroutine")

	huge := s.takeArgs()
	huge.row = make([]int, 0, spareArgsRows+1)
	s.keepArgs(huge)
	assert.Empty(t, s.spare, "a huge call's arguments are not kept")

	var many []*args
	for range spareArgs + 2 {
		many = append(many, s.takeArgs())
	}
	for _, a := range many {
		s.keepArgs(a)
	}
	assert.Len(t, s.spare, spareArgs, "the list is bounded")
}
