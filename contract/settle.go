package contract

import (
	"context"
	"fmt"
)

// Settle waits within ctx until a has quiesced and returns its outcome:
// the one wait an engine needs before it reads a fetched slot or reuses
// a published one. It returns ctx's error if ctx ends first, beside the
// outcome when it is known by then; the attempt's slots are then still
// lent and must not be reused. An attempt that never quiesces (a driver
// that cannot prove its access ended) keeps Settle waiting until ctx
// ends.
func Settle(ctx context.Context, a Attempt) (Outcome, error) {
	select {
	case <-a.Done():
		o, _ := a.Outcome()
		return o, nil
	case <-ctx.Done():
		o, _ := a.Outcome()
		return o, fmt.Errorf("kvshare: attempt not quiesced, its slots still lent: %w", ctx.Err())
	}
}
