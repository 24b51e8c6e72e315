package memdrv_test

import (
	"bytes"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// FuzzGetStaysInsideItsSlot stores an object of any size and gets it
// into the middle slot of three: the verdict follows the sizes, and no
// byte outside the slot (nor, for a long object, inside it) changes.
func FuzzGetStaysInsideItsSlot(f *testing.F) {
	f.Add(uint16(64), uint16(64))
	f.Add(uint16(64), uint16(0))
	f.Add(uint16(64), uint16(63))
	f.Add(uint16(64), uint16(65))
	f.Add(uint16(1), uint16(4096))
	f.Add(uint16(4096), uint16(4095))
	f.Fuzz(func(t *testing.T, slotSize, objSize uint16) {
		sb := int64(slotSize%4096) + 1
		obj := pattern(int(objSize%8192), byte(objSize))
		synctest.Test(t, func(t *testing.T) {
			s := memdrv.NewStore()
			d := memdrv.New(s, memdrv.Options{Logger: quiet})
			mem, reg := register(t, d, sb, 3)
			s.Set("k", obj)
			op, err := d.Get(batch(contract.Row{Name: []byte("k"), Spans: []contract.Span{mem.Region.Slot(1)}}), nil, nil)
			require.NoError(t, err)
			synctest.Wait()
			st := op.Poll(nil)
			slot := mem.Slot(1)
			switch n := int64(len(obj)); {
			case n == sb:
				assert.Equal(t, statuses(contract.Ready), st.Rows)
				assert.Equal(t, obj, slot)
			case n < sb:
				assert.Equal(t, statuses(contract.Fault), st.Rows)
				assert.True(t, bytes.Equal(obj, slot[:n]))
				assert.True(t, untouched(slot[n:]))
			default:
				assert.Equal(t, statuses(contract.Fault), st.Rows)
				assert.True(t, untouched(slot))
			}
			assert.Equal(t, contract.Ended, st.Access)
			assert.True(t, untouched(mem.Slot(0)))
			assert.True(t, untouched(mem.Bytes[2*sb:]), "slot 2 and the padding")
			require.True(t, d.Drain(t.Context()))
			require.NoError(t, d.Unregister(reg))
		})
	})
}
