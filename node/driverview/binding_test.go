package driverview_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/node/driverview"
)

// countedHold counts the lender's hold releases.
type countedHold struct{ n int }

func (h *countedHold) Release() { h.n++ }

// openLend binds memory of its own through a fresh view of shared, as
// the node binds a lend.
func openLend(t *testing.T, shared contract.Driver) (*binding.Backend, *memdrv.Memory, *countedHold) {
	t.Helper()
	mem, err := memdrv.Alloc(4096, 4, contract.Host)
	require.NoError(t, err)
	hold := &countedHold{}
	b, err := binding.Open(context.Background(), binding.Loan{Regions: []contract.SlotRegion{mem.Region}, Hold: hold},
		driverview.New(shared).Driver(), binding.Config{KeyPrefix: "lend", Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return b, mem, hold
}

// Two lends bound through views of one driver, as the node binds them:
// one publishes, the other fetches the bytes; one closes (its view
// drained and closed by the binding) while the other's publish is held
// inside the store, past its deadline: the closing lend does not wait
// for it, the held publish's outcome is forced at its deadline and its
// quiescence waits for the store, and the shared driver then drains and
// closes, last.
func TestLendsBoundThroughViews(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
		a, amem, ahold := openLend(t, d)
		b, bmem, bhold := openLend(t, d)
		copy(amem.Slot(0), strings.Repeat("a", 4096))

		pub, err := a.Publish(oneRow(0, "block"), nil)
		require.NoError(t, err)
		<-pub.Done()
		fet, err := b.Fetch(oneRow(3, "block"), nil)
		require.NoError(t, err)
		<-fet.Done()
		out, _ := fet.Outcome()
		require.Equal(t, []bool{true}, out.Delivered)
		assert.Equal(t, amem.Slot(0), bmem.Slot(3))

		key, err := b.Key([]byte("late"))
		require.NoError(t, err)
		gate := d.HoldKeys(memdrv.PutDir, key)
		late, err := b.PublishBy(oneRow(1, "late"), nil, time.Now().Add(time.Second))
		require.NoError(t, err)
		require.NoError(t, gate.Held(context.Background()))

		require.NoError(t, a.Close(context.Background()), "a closes while b's row is held")
		assert.Equal(t, 1, ahold.n, "a's hold released: no store can touch a's memory")
		require.NoError(t, amem.Free())

		out, err = late.Wait(context.Background())
		require.NoError(t, err)
		require.True(t, errors.Is(out.Fault, binding.ErrDeadline))
		assert.Equal(t, []contract.RowStatus{contract.Pending}, out.Rows)
		synctest.Wait()
		assert.False(t, late.Quiesced(), "the held row still reads b's slot")

		gate.Release()
		<-late.Done()
		require.NoError(t, b.Close(context.Background()))
		assert.Equal(t, 1, bhold.n)
		require.NoError(t, bmem.Free())
		assert.True(t, d.Drain(context.Background()), "the owner drains the shared driver last")
		require.NoError(t, d.Close())
	})
}
