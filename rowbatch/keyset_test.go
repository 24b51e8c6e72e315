package rowbatch

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeysetAgainstAScan drives windows of every length over keys that
// repeat often, restarting at random points, and compares every answer
// with a scan of the window. Long windows and restarts exercise the table
// and its stale entries.
func TestKeysetAgainstAScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		n := 1 + rng.IntN(200)
		alphabet := 1 + rng.IntN(2*n)
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("kvshare/v1/%d", rng.IntN(alphabet))
		}
		longest := 1 + rng.IntN(n)
		s := keyset{keys: keys, longest: longest}
		for from := 0; from < n; {
			s.restart(from)
			for s.end < n && s.end-from < longest {
				i := s.end
				want := -1
				for j := from; j < i; j++ {
					if keys[j] == keys[i] {
						want = j
						break
					}
				}
				got, dup := s.repeats()
				require.Equal(t, want >= 0, dup, "round %d: window [%d, %d), row %d", round, from, i, i)
				if dup {
					require.Equal(t, want, got, "round %d: row %d", round, i)
					require.Equal(t, i, s.end, "a repeat leaves the window alone")
					break
				}
				require.Equal(t, i+1, s.end, "a new key grows the window")
			}
			// Restart at the window's end or, now and then, further on.
			from = min(n, s.end+rng.IntN(3))
		}
	}
}

func TestSameKey(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"a", "a", true},
		{"", "a", false},
		{"ab", "a", false},
		{"stem/0a", "stem/1a", false},
		{"stem/0a", "stem/0b", false},
		{"stem/0a", "stem/0a", true},
	} {
		assert.Equal(t, tt.want, sameKey(tt.a, tt.b), "sameKey(%q, %q)", tt.a, tt.b)
	}
}
