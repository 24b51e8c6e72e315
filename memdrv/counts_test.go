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

// TestAbsentWithoutAbsentIsMiss: without AbsentIsMiss an absent key is a
// Fault with nothing written and access ended; every other verdict is
// as with it.
func TestAbsentWithoutAbsentIsMiss(t *testing.T) {
	tests := []struct {
		name  string
		opts  memdrv.Options
		stage func(f *fixture)
		want  contract.RowStatus
	}{
		{"absent, AbsentIsMiss", memdrv.Options{}, func(*fixture) {}, contract.Miss},
		{"absent, NoAbsentIsMiss", memdrv.Options{NoAbsentIsMiss: true}, func(*fixture) {}, contract.Fault},
		{"absent and failing reads, NoAbsentIsMiss", memdrv.Options{NoAbsentIsMiss: true}, func(f *fixture) { f.d.FailReads("k") }, contract.Fault},
		{"being written, NoAbsentIsMiss", memdrv.Options{NoAbsentIsMiss: true}, func(f *fixture) { f.store.BeginWrite("k") }, contract.NotReady},
		{"stored, NoAbsentIsMiss", memdrv.Options{NoAbsentIsMiss: true}, func(f *fixture) { f.store.Set("k", pattern(slotBytes, 3)) }, contract.Ready},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, tt.opts)
				tt.stage(f)
				op := f.get(f.row(1, "k"))
				synctest.Wait()
				st := op.Poll(nil)
				assert.Equal(t, contract.OpState{Rows: statuses(tt.want), Access: contract.Ended}, st)
				if tt.want != contract.Ready {
					assert.True(t, untouched(f.mem.Bytes), "nothing written")
				}
				f.teardown()
			})
		})
	}
}

// TestRowEndSaysWhy: the row-end hook is told when a put did not reach
// the store because this driver was writing the key, and when a get
// found nothing under its key.
func TestRowEndSaysWhy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{NoAbsentIsMiss: true})
		var ends []memdrv.RowEnd
		f.d.OnRowEnd(func(e memdrv.RowEnd) contract.RowStatus {
			ends = append(ends, e) // rows run one at a time below
			return e.Status
		})
		gate := f.d.Hold(memdrv.PutDir)
		f.write(0, 1)
		f.put(f.row(0, "k"))
		require.NoError(t, gate.Held(t.Context()))
		f.put(f.row(1, "k"))
		synctest.Wait()
		gate.Release()
		synctest.Wait()
		f.store.BeginWrite("w")
		f.put(f.row(2, "w"))
		synctest.Wait()
		f.get(f.row(3, "absent"))
		synctest.Wait()

		type why struct {
			key              string
			status           contract.RowStatus
			ownWrite, absent bool
		}
		var got []why
		for _, e := range ends {
			got = append(got, why{e.Key, e.Status, e.OwnWrite, e.Absent})
		}
		assert.Equal(t, []why{
			{"k", contract.NotReady, true, false}, // the second put, while the first is held
			{"k", contract.Ready, false, false},
			{"w", contract.NotReady, false, false}, // another writer's key
			{"absent", contract.Fault, false, true},
		}, got)
		f.teardown()
	})
}

// TestBusyAndRowsIn: Busy counts rows running and callbacks under way;
// RowsIn tells a region's queued rows from running and unprovable ones.
func TestBusyAndRowsIn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{Workers: 1})
		f.keep() // the unprovable get pins the region
		other := alloc(t, slotBytes, 2, contract.Host)
		oreg, err := f.d.Register(other.Region)
		require.NoError(t, err)
		assert.Zero(t, f.d.Busy())
		assert.Equal(t, memdrv.RegionRows{}, f.d.RowsIn(f.mem.Region))

		gate := f.d.Hold(memdrv.PutDir)
		f.put(f.row(0, "held"))
		require.NoError(t, gate.Held(t.Context()))
		f.put(f.row(1, "queued-a"), f.row(2, "queued-b"))
		assert.Equal(t, 1, f.d.Busy())
		assert.Equal(t, memdrv.RegionRows{Queued: 2, Running: 1}, f.d.RowsIn(f.mem.Region))
		assert.Equal(t, memdrv.RegionRows{}, f.d.RowsIn(other.Region), "nothing in the other region")

		gate.Release()
		synctest.Wait()
		assert.Zero(t, f.d.Busy())
		assert.Equal(t, memdrv.RegionRows{}, f.d.RowsIn(f.mem.Region))

		// A worker inside a callback counts as busy.
		unblock := make(chan struct{})
		entered := make(chan struct{}, 1)
		_, err = f.d.Put(batch(f.row(3, "called")), func() {
			entered <- struct{}{}
			<-unblock
		})
		require.NoError(t, err)
		<-entered
		assert.Equal(t, 1, f.d.Busy())
		close(unblock)
		synctest.Wait()
		assert.Zero(t, f.d.Busy())

		f.store.Set("u", pattern(slotBytes, 2))
		f.d.UnprovableGets("u")
		f.get(f.row(4, "u"))
		synctest.Wait()
		assert.Equal(t, memdrv.RegionRows{Unprovable: 1}, f.d.RowsIn(f.mem.Region))
		require.NoError(t, f.d.Unregister(oreg))
		assert.True(t, bytes.Equal(other.Bytes, bytes.Repeat([]byte{fillByte}, len(other.Bytes))), "the other region untouched")
	})
}
