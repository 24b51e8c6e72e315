package binding

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Scratch given back on one goroutine is found by the next attempt on
// another; scratch of a larger view goes to the collectable pool, and a
// huge view's is not kept at all.
func TestScratchIsKeptForTheNextAttempt(t *testing.T) {
	var p scratchPool
	s := p.get(1024, 4096, 1)
	done := make(chan struct{})
	go func() { p.put(s); close(done) }()
	<-done
	assert.Same(t, s, p.get(512, 100, 1), "kept, found from another goroutine")

	big := p.get(keptRows+1, 10, 1)
	p.put(big)
	assert.Empty(t, p.kept, "a view above keptRows waits in the sync.Pool only")

	huge := p.get(maxPooledRows+1, 10, 1)
	p.put(huge)
	assert.Empty(t, p.kept)

	for range keptScratch + 2 {
		p.put(p.get(16, 16, 1))
	}
	var many []*scratch
	for range keptScratch + 2 {
		many = append(many, p.get(16, 16, 1))
	}
	for _, s := range many {
		p.put(s)
	}
	assert.Len(t, p.kept, keptScratch, "the list is bounded")
}
