package redisdrv

import (
	"testing"
	"time"

	"github.com/kvshare/kvshare/patience"
)

// Every bounded wait of this package's tests comes from patience: a span
// scaled by KVSHARE_WAIT_SCALE, extended (each extension logged on the
// test) only while the process was starved or what the wait is for
// moved. A bound only keeps a broken test from hanging; a duration a
// test gives the code to see it give up (a call timeout, a short
// context) is an input, not a bound.

// bound is a patient bound for a wait of t, named what: span scaled by
// KVSHARE_WAIT_SCALE.
func bound(t testing.TB, span time.Duration, what string) patience.Bound {
	return patience.Bound{Span: patience.Scaled(span), What: t.Name() + ": " + what, Logf: t.Logf}
}
