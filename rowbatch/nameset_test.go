package rowbatch

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNamesetAgainstAScan drives windows of every length over names that
// repeat often, restarting at random points, and compares every answer
// with a scan of the window. Long windows and restarts exercise the table
// and its stale entries; one set serves every round, so reset's clearing
// is exercised too.
func TestNamesetAgainstAScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var s nameset // one set for every round: reset must forget the last
	for round := range 200 {
		n := 1 + rng.IntN(200)
		alphabet := 1 + rng.IntN(2*n)
		keys := make([][]byte, n)
		for i := range keys {
			keys[i] = fmt.Appendf(nil, "kvshare/v1/%d", rng.IntN(alphabet))
		}
		longest := 1 + rng.IntN(n)
		s.reset(keys, longest)
		for from := 0; from < n; {
			s.restart(from)
			for s.end < n && s.end-from < longest {
				i := s.end
				want := -1
				for j := from; j < i; j++ {
					if string(keys[j]) == string(keys[i]) {
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

func TestSameName(t *testing.T) {
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
		assert.Equal(t, tt.want, sameName([]byte(tt.a), []byte(tt.b)), "sameName(%q, %q)", tt.a, tt.b)
	}
}
