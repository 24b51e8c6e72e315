package fakesdk

import (
	"bytes"
	"testing"

	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRepeatedKeyInOneCall: what the real store answers for a key given
// twice in one call (seen on a real pool): in a put the first copy gets
// its real answer and later copies 0 whatever happened to the first; in
// a get each copy is checked against, and written into, its own buffer.
func TestRepeatedKeyInOneCall(t *testing.T) {
	untouched := bytes.Repeat([]byte{0xEE}, slot)
	for _, tc := range []struct {
		name  string
		opts  Options
		fault *Fault
		run   func(t *testing.T, st *Store, c *Client, s *slab)
	}{
		{"put: the first copy is stored from its own buffer, the second answers 0", Options{}, nil,
			func(t *testing.T, st *Store, c *Client, s *slab) {
				assert.Equal(t, []int64{0, 0}, put(t, c, s, []string{"d", "d"}, 0, 1))
				obj, _ := st.Object("d")
				assert.Equal(t, s.slot(0), obj, "the first copy's bytes")
				assert.Equal(t, int64(2*slot), st.Used(), "stored once, beside \"old\"")
			}},
		{"put: every later copy answers 0, a key between them its own answer", Options{Capacity: 2 * slot}, nil,
			func(t *testing.T, st *Store, c *Client, s *slab) {
				assert.Equal(t, []int64{0, 0, 0, -200, 0}, put(t, c, s, []string{"d", "e", "d", "f", "d"}, 0, 1, 2, 3, 1))
				assert.Equal(t, []int32{1, 1, 0}, exist(t, c, "d", "e", "f"))
			}},
		{"put: the first copy answers -600 for 0 bytes, the second 0, nothing stored", Options{}, nil,
			func(t *testing.T, st *Store, c *Client, s *slab) {
				res := make([]int64, 2)
				require.NoError(t, c.BatchPutFrom([]string{"d", "d"}, s.addrs(0, 1), []uint64{0, slot}, res))
				assert.Equal(t, []int64{-600, 0}, res)
				assert.Equal(t, []int32{0}, exist(t, c, "d"), "0 proves nothing")
			}},
		{"put: the first copy answers -200 in a full pool, the second 0", Options{Capacity: slot - 1}, nil,
			func(t *testing.T, st *Store, c *Client, s *slab) {
				assert.Equal(t, []int64{-200, 0}, put(t, c, s, []string{"d", "d"}, 0, 1))
				assert.Equal(t, []int32{0}, exist(t, c, "d"))
			}},
		{"put: a fault answers for the first copy only", Options{}, &Fault{Op: Put, Key: "d", Code: mooncakesdk.RPCFail},
			func(t *testing.T, st *Store, c *Client, s *slab) {
				assert.Equal(t, []int64{-900, 0}, put(t, c, s, []string{"d", "d"}, 0, 1))
				assert.Equal(t, []int32{0}, exist(t, c, "d"), "nothing stored, yet the second copy answered 0")
				assert.Equal(t, int64(slot), st.Used(), "only \"old\"")
			}},
		{"put: RDMA refuses the first copy's buffer, the second answers 0", Options{RDMA: true}, nil,
			func(t *testing.T, st *Store, c *Client, s *slab) {
				require.NoError(t, c.RegisterBuffer(s.addr(1), slot))
				assert.Equal(t, []int64{-800, 0}, put(t, c, s, []string{"d", "d"}, 0, 1))
				assert.Equal(t, []int32{0}, exist(t, c, "d"))
			}},
		{"get: each copy is written into its own buffer", Options{}, nil,
			func(t *testing.T, st *Store, c *Client, s *slab) {
				assert.Equal(t, []int64{slot, slot}, get(t, c, s, []string{"old", "old"}, 1, 2))
				assert.Equal(t, bytes.Repeat([]byte{0x0D}, slot), s.slot(1))
				assert.Equal(t, bytes.Repeat([]byte{0x0D}, slot), s.slot(2))
			}},
		{"get: each copy is checked against its own size", Options{}, nil,
			func(t *testing.T, st *Store, c *Client, s *slab) {
				res := make([]int64, 3)
				require.NoError(t, c.BatchGetInto([]string{"old", "old", "old"}, s.addrs(1, 2, 3), []uint64{slot - 1, slot, slot + 0}, res))
				assert.Equal(t, []int64{-600, slot, slot}, res)
				assert.Equal(t, untouched, s.slot(1), "the too-small buffer is not written")
				assert.Equal(t, bytes.Repeat([]byte{0x0D}, slot), s.slot(2))
				assert.Equal(t, bytes.Repeat([]byte{0x0D}, slot), s.slot(3))
			}},
		{"get: a per-key fault answers for every copy", Options{}, &Fault{Op: Get, Key: "old", Code: mooncakesdk.LeaseExpired, Phase: AfterLanding},
			func(t *testing.T, st *Store, c *Client, s *slab) {
				assert.Equal(t, []int64{-707, -707}, get(t, c, s, []string{"old", "old"}, 1, 2))
				assert.Equal(t, bytes.Repeat([]byte{0x0D}, slot), s.slot(1))
				assert.Equal(t, bytes.Repeat([]byte{0x0D}, slot), s.slot(2))
			}},
		{"exist: every copy answers", Options{}, nil,
			func(t *testing.T, st *Store, c *Client, s *slab) {
				assert.Equal(t, []int32{1, 0, 1}, exist(t, c, "old", "missing", "old"))
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, s := faultWorld(t, tc.opts, 4)
			if tc.opts.Capacity > 0 { // start from an empty pool
				require.Equal(t, 1, st.Vanish("old"))
			}
			if tc.fault != nil {
				require.NoError(t, st.Script(*tc.fault))
			}
			tc.run(t, st, st.Client(), s)
		})
	}
}
