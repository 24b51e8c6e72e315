package mooncakesdk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A pooled array as long as a call needs is reused, not made anew:
// whenever the pool hands back the entry a call released, its array is
// the one that call used. (The pool may drop an entry, under the race
// detector at random, so only returns of the same entry are checked, and
// the test asks that there were some.)
func TestPooledArraysOfTheRightLengthAreReused(t *testing.T) {
	var l KeyList
	for _, k := range []string{"a", "b", "c"} {
		require.NoError(t, l.Append(k))
	}
	same := 0
	for range 100 {
		ck := pinKeys(&l)
		arr := &ck.ptrs[0]
		ck.release()
		again := pinKeys(&l)
		if again == ck {
			same++
			assert.Same(t, arr, &again.ptrs[0], "the key pointers' array")
		}
		again.release()

		pc := getPutCodes(3)
		codes := &pc.codes[0]
		pc.put()
		pcAgain := getPutCodes(3)
		if pcAgain == pc {
			same++
			assert.Same(t, codes, &pcAgain.codes[0], "the put codes' array")
		}
		pcAgain.put()
	}
	assert.Positive(t, same, "the pool never handed an entry back")
}
