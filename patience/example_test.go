package patience_test

import (
	"context"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/patience"
)

// A wait bounded the patient way: the span, scaled by KVSHARE_WAIT_SCALE,
// extended only while the process is starved or the work moves.
func Example() {
	done := make(chan struct{})
	go func() {
		time.Sleep(10 * time.Millisecond) // the work waited for
		close(done)
	}()
	b := patience.Bound{Span: patience.Scaled(5 * time.Second), What: "the work"}
	ctx, cancel := b.Context(context.Background())
	defer cancel()
	select {
	case <-done:
		fmt.Println("done within the bound")
	case <-ctx.Done():
		fmt.Println("gave up:", ctx.Err())
	}
	// Output: done within the bound
}
