package fakesdk

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestObjectsVanish: eviction, a provider past its TTL, the destroy of
// the mounting client: objects go, later gets answer -704. Scripted with
// Store.Vanish between calls or a Vanish fault during one.
func TestObjectsVanish(t *testing.T) {
	written := bytes.Repeat([]byte{0x0D}, slot)
	untouched := bytes.Repeat([]byte{0xEE}, slot)
	for _, tc := range []struct {
		name  string
		fault *Fault
		run   func(t *testing.T, st *Store, c *Client, s *slab)
	}{
		{"Store.Vanish between calls", nil, func(t *testing.T, st *Store, c *Client, s *slab) {
			assert.Equal(t, 1, st.Vanish("old", "missing"))
			assert.Equal(t, []int64{-704}, get(t, c, s, []string{"old"}, 1))
			assert.Equal(t, untouched, s.slot(1))
			assert.Equal(t, []int32{0}, exist(t, c, "old"))
			assert.Zero(t, st.Used(), "its bytes are free again")
			assert.Equal(t, 0, st.Vanish("old"), "gone already")
		}},
		{"a vanished key can be put anew", nil, func(t *testing.T, st *Store, c *Client, s *slab) {
			st.Vanish("old")
			assert.Equal(t, []int64{0}, put(t, c, s, []string{"old"}, 0))
			obj, _ := st.Object("old")
			assert.Equal(t, s.slot(0), obj, "the new bytes")
		}},
		{"Store.Vanish leaves a put in flight alone", nil, func(t *testing.T, st *Store, c *Client, s *slab) {
			gate := NewGate()
			require.NoError(t, st.Script(Fault{Op: Put, Hold: gate, Times: 1}))
			done := make(chan []int64)
			go func() { done <- put(t, st.Client(), s, []string{"new"}, 0) }()
			<-gate.Reached()
			assert.Equal(t, 0, st.Vanish("new"))
			gate.Open()
			assert.Equal(t, []int64{0}, <-done)
			assert.Equal(t, []int32{1}, exist(t, c, "new"))
		}},
		{"before an exists-check: it answers 0, a later get -704", &Fault{Op: Exist, Key: "old", Vanish: true},
			func(t *testing.T, st *Store, c *Client, s *slab) {
				assert.Equal(t, []int32{0}, exist(t, c, "old"))
				assert.Equal(t, []int64{-704}, get(t, c, s, []string{"old"}, 1))
			}},
		{"after a get's data moved: it is served, a later get answers -704", &Fault{Op: Get, Vanish: true, Phase: AfterLanding, Times: 1},
			func(t *testing.T, st *Store, c *Client, s *slab) {
				assert.Equal(t, []int64{slot}, get(t, c, s, []string{"old"}, 1))
				assert.Equal(t, written, s.slot(1))
				assert.Equal(t, []int64{-704}, get(t, c, s, []string{"old"}, 2))
				assert.Equal(t, untouched, s.slot(2))
			}},
		{"before a get: -704 at once", &Fault{Op: Get, Vanish: true, Times: 1},
			func(t *testing.T, st *Store, c *Client, s *slab) {
				assert.Equal(t, []int64{-704, -704}, get(t, c, s, []string{"old", "missing"}, 1, 2))
				assert.Equal(t, untouched, s.slot(1))
			}},
		{"right after a put stored it: the put answers 0, the check finds nothing", &Fault{Op: Put, Key: "new", Vanish: true, Phase: AfterLanding},
			func(t *testing.T, st *Store, c *Client, s *slab) {
				assert.Equal(t, []int64{0, 0}, put(t, c, s, []string{"new", "other"}, 0, 0))
				assert.Equal(t, []int32{0, 1}, exist(t, c, "new", "other"), "only the fault's key vanished")
			}},
		{"before a put of a stored key: the put stores its own bytes", &Fault{Op: Put, Key: "old", Vanish: true},
			func(t *testing.T, st *Store, c *Client, s *slab) {
				assert.Equal(t, []int64{0}, put(t, c, s, []string{"old"}, 0))
				obj, _ := st.Object("old")
				assert.Equal(t, s.slot(0), obj)
			}},
		{"a fault narrowed to a key spares calls without it", &Fault{Op: Get, Key: "old", Vanish: true},
			func(t *testing.T, st *Store, c *Client, s *slab) {
				assert.Equal(t, []int64{-704}, get(t, c, s, []string{"missing"}, 1))
				assert.Equal(t, []int32{1}, exist(t, c, "old"))
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, s := faultWorld(t, Options{}, 3)
			if tc.fault != nil {
				require.NoError(t, st.Script(*tc.fault))
			}
			tc.run(t, st, st.Client(), s)
		})
	}
}
