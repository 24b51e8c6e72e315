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

// pattern returns n bytes that differ from fillByte and from each other
// nearby.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i)
		if b[i] == fillByte {
			b[i]++
		}
	}
	return b
}

func TestGetVerdicts(t *testing.T) {
	const slot = 2
	exact := pattern(slotBytes, 1)
	tests := []struct {
		name       string
		stage      func(f *fixture)
		want       contract.RowStatus
		wantAccess contract.Access
		wantHead   []byte // bytes expected at the slot's head; the rest untouched
	}{
		{"exact size", func(f *fixture) { f.store.Set("k", exact) }, contract.Ready, contract.Ended, exact},
		{"shorter object", func(f *fixture) { f.store.Set("k", exact[:40]) }, contract.Fault, contract.Ended, exact[:40]},
		{"empty object", func(f *fixture) { f.store.Set("k", nil) }, contract.Fault, contract.Ended, nil},
		{"longer object", func(f *fixture) { f.store.Set("k", pattern(slotBytes+1, 1)) }, contract.Fault, contract.Ended, nil},
		{"absent", func(*fixture) {}, contract.Miss, contract.Ended, nil},
		{"being written", func(f *fixture) { f.store.BeginWrite("k") }, contract.NotReady, contract.Ended, nil},
		{"read fails", func(f *fixture) {
			f.store.Set("k", exact)
			f.d.FailReads("k")
		}, contract.Fault, contract.Ended, exact[:slotBytes/2]},
		{"read fails, absent", func(f *fixture) { f.d.FailReads("k") }, contract.Miss, contract.Ended, nil},
		{"unprovable", func(f *fixture) {
			f.store.Set("k", exact)
			f.d.UnprovableGets("k")
		}, contract.Fault, contract.Unprovable, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, memdrv.Options{})
				if tt.wantAccess == contract.Unprovable {
					f.keep()
				}
				tt.stage(f)
				called := new(counter)
				op, err := f.d.Get(batch(f.row(slot, "k")), nil, called.inc)
				require.NoError(t, err)
				synctest.Wait()

				st := op.Poll(nil)
				assert.Equal(t, statuses(tt.want), st.Rows, tt.name)
				assert.Equal(t, tt.wantAccess, st.Access, tt.name)
				assert.Equal(t, int64(1), called.get(), "%s: one change, one callback", tt.name)
				got := f.mem.Slot(slot)
				assert.True(t, bytes.Equal(tt.wantHead, got[:len(tt.wantHead)]), "%s: slot head %x", tt.name, got[:len(tt.wantHead)])
				assert.True(t, untouched(got[len(tt.wantHead):]), "%s: slot past the object untouched", tt.name)
				assert.True(t, untouched(f.outside(slot)), "%s: nothing outside the slot written", tt.name)
			})
		})
	}
}

func TestPutVerdicts(t *testing.T) {
	const slot = 3
	tests := []struct {
		name  string
		stage func(f *fixture)
		want  contract.RowStatus
		// wantObject is the object under "k" afterwards: nil for none,
		// slotData for the slot's bytes.
		wantObject []byte
	}{
		{"new key", func(*fixture) {}, contract.Ready, slotData},
		{"complete object exists", func(f *fixture) { f.store.Set("k", []byte("first")) }, contract.Ready, []byte("first")},
		{"being written", func(f *fixture) { f.store.BeginWrite("k") }, contract.NotReady, nil},
		{"over capacity", func(f *fixture) { f.store.SetCapacity(slotBytes - 1) }, contract.Declined, nil},
		{"capacity exactly", func(f *fixture) { f.store.SetCapacity(slotBytes) }, contract.Ready, slotData},
		{"capacity counts stored objects", func(f *fixture) {
			f.store.Set("other", make([]byte, 10))
			f.store.SetCapacity(slotBytes + 9)
		}, contract.Declined, nil},
		{"full store", func(f *fixture) { f.store.SetFull() }, contract.Declined, nil},
		{"full store, complete object exists", func(f *fixture) {
			f.store.Set("k", []byte("first"))
			f.store.SetFull()
		}, contract.Ready, []byte("first")},
		{"full store emptied by SetCapacity", func(f *fixture) {
			f.store.SetFull()
			f.store.SetCapacity(0)
		}, contract.Ready, slotData},
		{"capacity back to unlimited", func(f *fixture) {
			f.store.SetCapacity(1)
			f.store.SetCapacity(0)
		}, contract.Ready, slotData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, memdrv.Options{})
				data := f.write(slot, 7)
				tt.stage(f)
				op := f.put(f.row(slot, "k"))
				synctest.Wait()

				st := op.Poll(nil)
				assert.Equal(t, statuses(tt.want), st.Rows, tt.name)
				assert.Equal(t, contract.Ended, st.Access, tt.name)
				want := tt.wantObject
				if bytes.Equal(want, slotData) {
					want = data
				}
				got, ok := f.store.Object("k")
				assert.Equal(t, want != nil, ok, tt.name)
				assert.Equal(t, want, got, tt.name)
				assert.Equal(t, data, f.mem.Slot(slot), "%s: a put leaves its slot alone", tt.name)
			})
		})
	}
}

// slotData stands for "the bytes of the slot" in TestPutVerdicts.
var slotData = []byte("<slot>")

func TestPutOfAKeyThisDriverIsWriting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{Workers: 2})
		first := f.write(0, 1)
		f.write(1, 2)
		gate := f.d.Hold(memdrv.PutDir)
		op1 := f.put(f.row(0, "k"))
		require.NoError(t, gate.Held(t.Context()))

		// The second put of the key never reaches the store, so the gate
		// does not hold it.
		op2 := f.put(f.row(1, "k"))
		synctest.Wait()
		assert.Equal(t, contract.OpState{Rows: statuses(contract.NotReady), Access: contract.Ended}, op2.Poll(nil))
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Pending), Access: contract.Open}, op1.Poll(nil))

		gate.Release()
		synctest.Wait()
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Ready), Access: contract.Ended}, op1.Poll(nil))
		got, _ := f.store.Object("k")
		assert.Equal(t, first, got)

		// Once the first put is final, the key is free again: a put of
		// it is Ready, keeping the first object.
		op3 := f.put(f.row(1, "k"))
		synctest.Wait()
		assert.Equal(t, statuses(contract.Ready), op3.Poll(nil).Rows)
		got, _ = f.store.Object("k")
		assert.Equal(t, first, got)
		f.teardown()
	})
}

func TestAnotherWriterFinishes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		finish := f.store.BeginWrite("k")
		f.write(0, 3)
		put := f.put(f.row(0, "k"))
		get := f.get(f.row(1, "k"))
		synctest.Wait()
		assert.Equal(t, statuses(contract.NotReady), put.Poll(nil).Rows)
		assert.Equal(t, statuses(contract.NotReady), get.Poll(nil).Rows)
		assert.True(t, untouched(f.mem.Slot(1)))

		obj := pattern(slotBytes, 9)
		finish(obj)
		get = f.get(f.row(1, "k"))
		synctest.Wait()
		assert.Equal(t, statuses(contract.Ready), get.Poll(nil).Rows)
		assert.Equal(t, obj, f.mem.Slot(1))
		f.teardown()
	})
}

func TestMultiSpanRows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{MultiSpan: true})
		a, b := f.write(0, 10), f.write(3, 50)
		r := f.mem.Region
		put := f.put(contract.Row{Name: []byte("k"), Spans: []contract.Span{r.Slot(0), r.Slot(3)}})
		synctest.Wait()
		require.Equal(t, statuses(contract.Ready), put.Poll(nil).Rows)
		got, _ := f.store.Object("k")
		assert.Equal(t, append(bytes.Clone(a), b...), got, "the object is the spans in order")

		// Back into two other slots, in the other order.
		get := f.get(contract.Row{Name: []byte("k"), Spans: []contract.Span{r.Slot(5), r.Slot(1)}})
		synctest.Wait()
		require.Equal(t, statuses(contract.Ready), get.Poll(nil).Rows)
		assert.Equal(t, a, f.mem.Slot(5))
		assert.Equal(t, b, f.mem.Slot(1))

		// A short object fills the first span and the head of the second.
		f.store.Set("short", got[:slotBytes+5])
		get = f.get(contract.Row{Name: []byte("short"), Spans: []contract.Span{r.Slot(6), r.Slot(7)}})
		synctest.Wait()
		require.Equal(t, statuses(contract.Fault), get.Poll(nil).Rows)
		assert.Equal(t, a, f.mem.Slot(6))
		assert.Equal(t, b[:5], f.mem.Slot(7)[:5])
		assert.True(t, untouched(f.mem.Slot(7)[5:]))
		f.teardown()
	})
}

func TestManyRowsOneOperation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{Workers: 3})
		var rows []contract.Row
		var want [][]byte
		for i := range slotCount {
			want = append(want, f.write(i, byte(i*16)))
			rows = append(rows, f.row(i, string(rune('a'+i))))
		}
		called := new(counter)
		op, err := f.d.Put(batch(rows...), called.inc)
		require.NoError(t, err)
		synctest.Wait()
		st := op.Poll(nil)
		assert.True(t, st.Settled())
		assert.Equal(t, contract.Ended, st.Access)
		assert.Equal(t, int64(slotCount), called.get(), "one callback per row")
		for i, r := range rows {
			assert.Equal(t, contract.Ready, st.Rows[i])
			key := string(r.Name) // plain: the key is the name
			got, ok := f.store.Object(key)
			require.True(t, ok, key)
			assert.Equal(t, want[i], got, key)
		}
		assert.Equal(t, 1, f.d.Admitted(memdrv.PutDir))
		assert.Zero(t, f.d.Admitted(memdrv.GetDir))
		f.teardown()
	})
}

// One row that cannot prove its access ended makes the whole operation
// Unprovable, whichever row ends last.
func TestOneUnprovableRowPinsItsOperation(t *testing.T) {
	for _, keys := range [][2]string{{"u", "k"}, {"k", "u"}} {
		t.Run(keys[0]+" first", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, memdrv.Options{Workers: 1})
				f.keep()
				f.store.Set("u", pattern(slotBytes, 1))
				f.store.Set("k", pattern(slotBytes, 2))
				f.d.UnprovableGets("u")
				op := f.get(f.row(0, keys[0]), f.row(1, keys[1]))
				synctest.Wait()
				st := op.Poll(nil)
				assert.Equal(t, contract.Unprovable, st.Access)
				assert.ElementsMatch(t, statuses(contract.Fault, contract.Ready), st.Rows)
				assert.Equal(t, 1, f.d.Unprovable())
			})
		})
	}
}
