package drivekit

import (
	"hash/maphash"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// colliding returns a putKeys whose every key hashes alike: each find
// must compare the keys themselves.
func colliding() putKeys {
	s := newPutKeys()
	s.hash = func(maphash.Seed, string) uint64 { return 42 }
	return s
}

// Keys whose hashes collide stay apart: one is never found for another,
// whichever end of the chain leaves first.
func TestPutKeysStayExactWhenHashesCollide(t *testing.T) {
	for name, order := range map[string][]string{
		"head first":   {"c", "b", "a"},
		"middle first": {"b", "a", "c"},
		"tail first":   {"a", "b", "c"},
	} {
		t.Run(name, func(t *testing.T) {
			s := colliding()
			ents := map[string]*putKey{}
			for _, k := range []string{"a", "b", "c"} {
				ents[k] = s.queue(k)
			}
			require.Len(t, s.byHash, 1, "one hash")
			assert.Equal(t, 3, s.len())
			assert.False(t, s.has("ab"), "a key never queued")
			assert.False(t, s.has(""), "a key never queued")
			for i, k := range order {
				s.unqueue(ents[k])
				assert.False(t, s.has(k), "%s left", k)
				for _, rest := range order[i+1:] {
					assert.True(t, s.has(rest), "%s stays after %s left", rest, k)
					assert.Same(t, ents[rest], s.find(rest))
				}
			}
			assert.Empty(t, s.byHash)
			assert.Len(t, s.free, 3, "entries kept for reuse")
		})
	}
}

// A key counts every queued row, and a row taken while another writes
// the key is an own write; an entry reused for a new key keeps nothing
// of the old.
func TestPutKeysCountRowsAndReuseEntries(t *testing.T) {
	s := colliding()
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
	assert.Empty(t, s.byHash)

	c := s.queue("c")
	assert.Contains(t, []*putKey{a1, b}, c, "a free entry reused")
	assert.Equal(t, "c", string(c.key))
	assert.Equal(t, 1, c.queued)
	assert.False(t, c.writing)
	assert.Nil(t, c.next)
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
		assert.Empty(t, d.puts.byHash)
		d.mu.Unlock()
		require.True(t, d.Drain(t.Context()))
		require.NoError(t, d.Unregister(reg))
	})
}
