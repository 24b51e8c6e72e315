package poolfloor

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

// The loop puts every row (a put and its exists-check a part), gets
// them back byte for byte, and Remove removes every object it stored.
func TestLoopPutsGetsAndRemoves(t *testing.T) {
	shape := Shape{Rows: 10, RowBytes: 256, ViewRows: 4, RowsPerCall: 3, BytesPerCall: 1 << 20, Workers: 2}
	mem, err := hostmem.Map(hostmem.Geometry{SlotBytes: shape.RowBytes, SlotCount: shape.Rows}, hostmem.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, mem.Free()) }()
	reg := mem.Regions()[0]
	slots := mem.Bytes(0)[:reg.Len]
	for i := range slots {
		slots[i] = byte(i * 7)
	}
	want := bytes.Clone(slots)

	store := fakesdk.New(fakesdk.Options{})
	client := store.Client()
	require.NoError(t, client.RegisterBuffer(reg.Base, uint64(reg.Len)))
	stem, err := keys.NewStem("floor/test")
	require.NoError(t, err)
	names := make([][]byte, shape.Rows)
	addrs := make([]uintptr, shape.Rows)
	for i := range names {
		names[i] = []byte{'r', byte(i)}
		addrs[i] = reg.Base + uintptr(int64(i)*shape.RowBytes)
	}
	put, err := shape.Prepare(contract.PutDir, stem, names, addrs)
	require.NoError(t, err)
	get, err := shape.Prepare(contract.GetDir, stem, names, addrs)
	require.NoError(t, err)

	loop := Start(client, shape.Workers)
	loop.Submit(put)
	<-put.Done()
	assert.Equal(t, shape.Rows, put.Ready(), "every put confirmed by its exists-check")
	clear(slots)
	loop.Submit(get)
	<-get.Done()
	loop.Stop() // no call touches the slots after this
	assert.Equal(t, shape.Rows, get.Ready(), "every get answered the row's size")
	assert.Equal(t, want, slots, "the rows came back byte for byte")
	calls := store.Calls()
	assert.EqualValues(t, 5, calls.Put, "10 rows in views of 4, 4 and 2, calls of 3: 3+1, 3+1, 2")
	assert.EqualValues(t, 5, calls.Exist)
	assert.EqualValues(t, 5, calls.Get)

	require.NoError(t, Remove(client, stem, names, 3))
	for _, n := range names {
		_, ok := store.Object(string(stem.AppendKey(nil, n)))
		assert.False(t, ok, "removed")
	}
	require.NoError(t, Remove(client, stem, names, 3), "an absent key is no error")
	require.NoError(t, client.UnregisterBuffer(reg.Base))
}
