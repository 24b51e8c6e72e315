package binding

import "context"

// turn lets one goroutine at a time through, as a mutex does, but its
// wait honours the waiter's context: a caller whose context ends stops
// waiting, holding nothing. The backend never holds a sync.Mutex across
// a wait; where one call must wait for another to finish (Close for
// Close, Reclaim for Reclaim, Unbind for Unbind), it waits for a turn.
// Make it with newTurn.
type turn chan struct{}

func newTurn() turn { return make(turn, 1) }

// take waits within ctx for the turn. A free turn is taken even when ctx
// has ended; otherwise it returns ctx's error when ctx ends first.
func (t turn) take(ctx context.Context) error {
	select {
	case t <- struct{}{}:
		return nil
	default:
	}
	select {
	case t <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// give hands the turn back to the next waiter.
func (t turn) give() { <-t }
