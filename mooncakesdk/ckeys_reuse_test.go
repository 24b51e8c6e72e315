package mooncakesdk

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A pooled array exactly as long as a call needs is reused, not made
// anew: whenever the pool hands back the entry a call released, a call
// of as many keys as its array holds gets that same array. (The pool may
// drop an entry, under the race detector at random, so only returns of
// the same entry are checked, and the test asks that there were some.)
func TestPooledArraysOfTheRightLengthAreReused(t *testing.T) {
	var one KeyList
	require.NoError(t, one.Append("k"))
	same := 0
	for range 100 {
		ck := pinKeys(&one)
		n := cap(ck.ptrs) // whatever an earlier call left in the pool
		ck.release()
		var l KeyList
		for i := range n {
			require.NoError(t, l.Append(strconv.Itoa(i)))
		}
		ck = pinKeys(&l)
		arr := &ck.ptrs[:1][0]
		ck.release()
		if again := pinKeys(&l); again == ck {
			same++
			assert.Same(t, arr, &again.ptrs[0], "the key pointers' array, %d long", n)
			again.release()
		} else {
			again.release()
		}

		pc := getPutCodes(1)
		n = cap(pc.codes)
		pc.put()
		pc = getPutCodes(n)
		codes := &pc.codes[0]
		pc.put()
		if again := getPutCodes(n); again == pc {
			same++
			assert.Same(t, codes, &again.codes[0], "the put codes' array, %d long", n)
			again.put()
		} else {
			again.put()
		}
	}
	assert.Positive(t, same, "the pool never handed an entry back")
}
