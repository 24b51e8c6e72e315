package mooncakedrv

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kvshare/kvshare/patience"
)

// Every bounded wait of this package's tests comes from patience: a span
// scaled by KVSHARE_WAIT_SCALE, extended (each extension logged on the
// test) only while the process was starved or what the wait is for
// moved. A bound only keeps a broken test from hanging; a duration a
// test gives the code to see it give up is an input, not a bound.

// bound is a patient bound of span for a wait of t, named what.
func bound(t testing.TB, span time.Duration, what string) patience.Bound {
	return patience.Bound{Span: span, What: t.Name() + ": " + what, Logf: t.Logf}
}

// eventually polls cond every millisecond until it holds, and fails t,
// saying what it waited for, when the test's patience bound
// (patience.Wait()) runs out first.
func eventually(t testing.TB, cond func() bool, format string, args ...any) {
	t.Helper()
	eventuallyWithin(t, patience.Wait(), cond, format, args...)
}

// eventuallyWithin is eventually with a span of its own.
func eventuallyWithin(t testing.TB, span time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	what := fmt.Sprintf(format, args...)
	ctx, cancel := bound(t, span, what).Context(context.Background())
	defer cancel()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			if !cond() {
				t.Fatalf("%s: not within the bound (%v, extended only while the process was starved)", what, span)
			}
			return
		case <-tick.C:
		}
	}
}
