package memdrv_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/internal/testkeys"
)

// Rows are stored and read under the key the batch's key maker builds
// from their names, never under the name itself; the scenario hooks and
// RowEnd speak of that key.
func TestRowsAreKeyedByTheKeyMaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{Workers: 1})
		ns := testkeys.Plain{Prefix: "ns/"}
		var ended []string
		f.d.OnRowEnd(func(e memdrv.RowEnd) contract.RowStatus {
			ended = append(ended, e.Dir.String()+":"+e.Key)
			return e.Status
		})

		data := f.write(0, 3)
		put, err := f.d.Put(contract.RowBatch{Keys: ns, Rows: []contract.Row{f.row(0, "a")}}, nil)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, statuses(contract.Ready), put.Poll(nil).Rows)
		got, ok := f.store.Object("ns/a")
		assert.True(t, ok, "stored under the key maker's key")
		assert.Equal(t, data, got)
		_, ok = f.store.Object("a")
		assert.False(t, ok, "not under the name")

		get, err := f.d.Get(contract.RowBatch{Keys: ns, Rows: []contract.Row{f.row(1, "a")}}, nil, nil)
		require.NoError(t, err)
		other := f.get(f.row(2, "a")) // plain: the key "a", which is absent
		synctest.Wait()
		assert.Equal(t, statuses(contract.Ready), get.Poll(nil).Rows)
		assert.Equal(t, data, f.mem.Slot(1))
		assert.Equal(t, statuses(contract.Miss), other.Poll(nil).Rows, "another key maker, another key")

		f.d.FailReads("ns/a")
		failed, err := f.d.Get(contract.RowBatch{Keys: ns, Rows: []contract.Row{f.row(3, "a")}}, nil, nil)
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, statuses(contract.Fault), failed.Poll(nil).Rows, "the hook names the key")

		assert.Equal(t, []string{"put:ns/a", "get:ns/a", "get:a", "get:ns/a"}, ended)
		f.teardown()
	})
}

// The keys are built once, at admission: the driver keeps no name, so
// what becomes of a name's bytes later changes nothing it does. (The
// contract lends names until access ends; memdrv does not need them
// that long.)
func TestKeysAreBuiltAtAdmission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		data := f.write(0, 5)
		name := []byte("a")
		resume := f.d.Pause()
		op, err := f.d.Put(batch(contract.Row{Name: name, Spans: []contract.Span{f.mem.Region.Slot(0)}}), nil)
		require.NoError(t, err)
		name[0] = 'z'
		resume()
		synctest.Wait()
		require.Equal(t, statuses(contract.Ready), op.Poll(nil).Rows)
		got, ok := f.store.Object("a")
		assert.True(t, ok, "stored under the key of the name as admitted")
		assert.Equal(t, data, got)
		_, ok = f.store.Object("z")
		assert.False(t, ok)
		f.teardown()
	})
}
