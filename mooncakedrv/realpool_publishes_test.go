package mooncakedrv

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// Two backends, each over a driver and client of its own, publish the
// same rows (so the same keys) at once, each with bytes of its own. A put
// never overwrites: a put that meets the other's in flight answers
// 0, which its exists-check does not confirm while the other is still
// writing (NotReady, undelivered), or does once the other finished
// (Ready: a complete object stands behind the key, if not these bytes).
// So no row is Fault or Declined, every row is delivered by at least one
// of the two, and a third lender reads each key back whole, holding the
// bytes of a publisher that delivered it.
func TestRealConcurrentPublishes(t *testing.T) {
	s := startRealStore(t, nil)
	const rows, slotBytes, prefix = 1024, 16 << 10, "kvshare-realpool/publishes"
	pubs := []*realLender{
		newRealLender(t, s, rows, slotBytes, prefix, false),
		newRealLender(t, s, rows, slotBytes, prefix, false),
	}
	reader := newRealLender(t, s, rows, slotBytes, prefix, false)
	for p, l := range pubs {
		for i := range rows {
			copy(l.mem.slot(i), rowBytes(byte(p), i, slotBytes))
		}
	}

	start := make(chan struct{})
	attempts := make([]chan contract.Attempt, len(pubs))
	for p, l := range pubs {
		attempts[p] = make(chan contract.Attempt, 1)
		go func() {
			<-start
			a, err := l.be.Publish(view(0, span(0, rows)...), nil)
			assert.NoError(t, err)
			attempts[p] <- a
		}()
	}
	close(start)
	var outs []contract.Outcome
	for p, l := range pubs {
		a := <-attempts[p]
		require.NotNil(t, a)
		outs = append(outs, l.outcome(a))
		l.quiesced(a)
		require.NoError(t, outs[p].Fault, "publisher %d", p)
		assert.Zero(t, l.be.Stats().Rows[contract.Declined], "publisher %d: rows Declined", p)
	}

	a, err := reader.be.Fetch(view(0, span(0, rows)...), nil)
	require.NoError(t, err)
	o := reader.outcome(a)
	require.NoError(t, o.Fault)
	require.Equal(t, rows, o.Prefix(), "every key holds a complete object")
	var both, only [2]int
	for i := range rows {
		got := reader.mem.slot(i)
		d0, d1 := outs[0].Delivered[i], outs[1].Delivered[i]
		is0, is1 := bytes.Equal(got, rowBytes(0, i, slotBytes)), bytes.Equal(got, rowBytes(1, i, slotBytes))
		switch {
		case d0 && d1:
			both[0]++
			assert.True(t, is0 || is1, "row %d: delivered by both, holds the bytes of neither", i)
		case d0:
			only[0]++
			assert.True(t, is0, "row %d: delivered by publisher 0 alone, holds other bytes (publisher 1's: %v)", i, is1)
		case d1:
			only[1]++
			assert.True(t, is1, "row %d: delivered by publisher 1 alone, holds other bytes (publisher 0's: %v)", i, is0)
		default:
			t.Errorf("row %d: delivered by neither publisher", i)
		}
	}
	t.Logf("%d rows delivered by both publishers, %d by publisher 0 alone, %d by publisher 1 alone (the other NotReady)", both[0], only[0], only[1])
}

// rowBytes is the content publisher p gives row i: a pattern of p and i,
// with both written at its head.
func rowBytes(p byte, i, n int) []byte {
	b := pattern(p*0x55+byte(i), n)
	b[0] = p
	binary.BigEndian.PutUint32(b[1:], uint32(i))
	return b
}
