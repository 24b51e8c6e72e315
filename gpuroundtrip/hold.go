package gpuroundtrip

import "sync"

// hold is a lender's hold on its staging memory: the binding releases it
// once no store can touch the memory any more, and only then may the
// lender free it.
type hold struct {
	once     sync.Once
	released chan struct{}
}

func newHold() *hold { return &hold{released: make(chan struct{})} }

// Release is the binding's side: the memory may go.
func (h *hold) Release() { h.once.Do(func() { close(h.released) }) }

// Released reports whether Release was called.
func (h *hold) Released() bool {
	select {
	case <-h.released:
		return true
	default:
		return false
	}
}
