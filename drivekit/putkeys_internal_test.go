package drivekit

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// colliding returns a putKeys whose every key hashes to sum: each find
// must compare the keys themselves.
func colliding(sum uint64) putKeys {
	s := newPutKeys()
	s.hash = func(maphash.Seed, string) uint64 { return sum }
	return s
}

// Keys whose hashes collide stay apart: one is never found for another,
// whichever leaves first, also where their slots wrap around the table.
func TestPutKeysStayExactWhenHashesCollide(t *testing.T) {
	for _, sum := range []uint64{42, 15} { // 15: the last slot of 16, the rest wrap
		for name, order := range map[string][]string{
			"first in first out": {"a", "b", "c"},
			"middle first":       {"b", "a", "c"},
			"last in first out":  {"c", "b", "a"},
		} {
			t.Run(fmt.Sprintf("%d %s", sum, name), func(t *testing.T) {
				s := colliding(sum)
				ents := map[string]*putKey{}
				for _, k := range []string{"a", "b", "c"} {
					ents[k] = s.queue(k)
				}
				assert.Equal(t, 3, s.n)
				assert.False(t, s.has("ab"), "a key never queued")
				assert.False(t, s.has(""), "a key never queued")
				for i, k := range order {
					s.unqueue(ents[k])
					assert.False(t, s.has(k), "%s left", k)
					for _, rest := range order[i+1:] {
						assert.Same(t, ents[rest], s.find(rest), "%s stays after %s left", rest, k)
					}
				}
				assert.True(t, s.empty())
				assert.Len(t, s.free, 3, "entries kept for reuse")
			})
		}
	}
}

// Under any mix of queues, takes and ends, over few hashes (many
// collisions, a table that grows), the set holds exactly the keys a
// plain model holds.
func TestPutKeysMatchAModel(t *testing.T) {
	s := newPutKeys()
	s.hash = func(_ maphash.Seed, k string) uint64 { return uint64(len(k)%3) * 7 }
	type row struct {
		key     string
		e       *putKey
		writing bool // taken as the writer
	}
	var queued, taken []row
	model := map[string]int{} // rows holding the key
	rng := rand.New(rand.NewPCG(1, 2))
	for step := range 5000 {
		switch op := rng.IntN(3); {
		case op == 0 || len(queued)+len(taken) == 0:
			k := fmt.Sprintf("k%d", rng.IntN(40))
			queued = append(queued, row{key: k, e: s.queue(k)})
			model[k]++
		case op == 1 && len(queued) > 0:
			i := rng.IntN(len(queued))
			r := queued[i]
			queued = append(queued[:i], queued[i+1:]...)
			if rng.IntN(4) == 0 { // cancelled while queued
				s.unqueue(r.e)
				model[r.key]--
				break
			}
			r.writing = s.take(r.e)
			if !r.writing {
				model[r.key]-- // an own write holds nothing
			}
			taken = append(taken, r)
		case len(taken) > 0:
			i := rng.IntN(len(taken))
			r := taken[i]
			taken = append(taken[:i], taken[i+1:]...)
			if r.writing {
				s.written(r.e)
				model[r.key]--
			}
		}
		n := 0
		for i := range 40 {
			k := fmt.Sprintf("k%d", i)
			if model[k] > 0 {
				n++
			}
			require.Equal(t, model[k] > 0, s.has(k), "step %d: %s", step, k)
		}
		require.Equal(t, n, s.n, "step %d", step)
	}
}

// A key counts every queued row, and a row taken while another writes
// the key is an own write; an entry reused for a new key keeps nothing
// of the old.
func TestPutKeysCountRowsAndReuseEntries(t *testing.T) {
	s := colliding(42)
	a1 := s.queue("a")
	b := s.queue("b")
	a2 := s.queue("a")
	require.Same(t, a1, a2, "one entry a key")
	assert.Equal(t, 2, a1.queued)

	assert.True(t, s.take(a1), "the first taker writes the key")
	assert.Equal(t, 1, s.writing)
	assert.False(t, s.take(a2), "the second, while it is written, is an own write")
	assert.True(t, s.take(b), "b is another key, though its hash is a's")
	assert.Equal(t, 2, s.writing)

	s.written(a1)
	assert.False(t, s.has("a"), "no row holds a: gone")
	assert.True(t, s.has("b"))
	s.written(b)
	assert.Zero(t, s.writing)
	assert.True(t, s.empty())

	c := s.queue("c")
	assert.Contains(t, []*putKey{a1, b}, c, "a free entry reused")
	assert.Equal(t, "c", string(c.key))
	assert.Equal(t, 1, c.queued)
	assert.False(t, c.writing)
	assert.False(t, s.has("a"))
	assert.False(t, s.has("b"))
}

// Over a driver whose keys all collide, puts of different keys are
// never own writes of each other, and a lookup's InFlight follows the
// keys exactly.
func TestDriverPutKeysExactUnderCollisions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := &verdicts{}
		d, reg, err := newRigWith(v, Options{Workers: 2})
		require.NoError(t, err)
		d.puts.hash = func(maphash.Seed, string) uint64 { return 7 }
		resume := d.Pause()
		a, err := d.Put(rows("a1", "a2"), nil)
		require.NoError(t, err)
		b, err := d.Put(rows("b1", "b2"), nil)
		require.NoError(t, err)
		d.mu.Lock()
		for _, k := range []string{"a1", "a2", "b1", "b2"} {
			assert.True(t, d.puts.has(k), k)
		}
		assert.False(t, d.puts.has("a3"))
		d.mu.Unlock()
		resume()
		synctest.Wait()
		for _, op := range []contract.Operation{a, b} {
			st := op.Poll(nil)
			assert.Equal(t, contract.Ended, st.Access)
			assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Ready}, st.Rows, "no row taken for an own write")
		}
		d.mu.Lock()
		assert.True(t, d.puts.empty())
		d.mu.Unlock()
		require.True(t, d.Drain(t.Context()))
		require.NoError(t, d.Unregister(reg))
	})
}
