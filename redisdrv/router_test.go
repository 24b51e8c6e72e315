package redisdrv

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// CLUSTER SLOTS entries become one owner a slot; an empty host is the
// node asked; a slot no entry names has no owner.
func TestSlotTableOf(t *testing.T) {
	tbl, err := slotTableOf([]slotRange{
		{0, 5460, "127.0.0.1", 7001},
		{5461, 10922, "", 7002},
		{10923, 16000, "10.0.0.3", 7003},
		{16001, 16001, "127.0.0.1", 7001},
		{16002, 16002, "?", 7005},
	}, "127.0.0.9:7002")
	require.NoError(t, err)
	assert.Equal(t, []string{"127.0.0.1:7001", "127.0.0.9:7002", "10.0.0.3:7003", "127.0.0.9:7005"}, tbl.addrs)
	for slot, want := range map[int]uint16{0: 0, 5460: 0, 5461: 1, 10922: 1, 10923: 2, 16000: 2, 16001: 0, 16002: 3, 16003: noOwner, 16383: noOwner} {
		assert.Equal(t, want, tbl.owner[slot], "slot %d", slot)
	}
}

// A bad entry is refused, naming it.
func TestSlotTableOfRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		entries []slotRange
		asked   string
		says    string
	}{
		"none":             {nil, "h:1", "no slot is assigned"},
		"reversed":         {[]slotRange{{9, 3, "h", 1}}, "h:1", "entry 0: bad slot range 9-3"},
		"past the last":    {[]slotRange{{0, 16384, "h", 1}}, "h:1", "bad slot range"},
		"negative":         {[]slotRange{{-1, 3, "h", 1}}, "h:1", "bad slot range"},
		"port zero":        {[]slotRange{{0, 1, "h", 0}}, "h:1", "port 0 is not a TCP port"},
		"port too high":    {[]slotRange{{0, 1, "h", 70000}}, "h:1", "not a TCP port"},
		"no host to take":  {[]slotRange{{0, 1, "", 7000}}, "nohost", "a node without a host"},
		"the second entry": {[]slotRange{{0, 1, "h", 1}, {2, 1, "h", 1}}, "h:1", "entry 1"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := slotTableOf(tc.entries, tc.asked)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.says)
		})
	}
}
