package memstore_test

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/telemetry"
	"github.com/kvshare/kvshare/telemetry/memstore"
)

// put puts one row of mem's slot under name and waits for its end.
func put(t *testing.T, d *memdrv.Driver, mem *memdrv.Memory, slot int, name string) contract.RowStatus {
	t.Helper()
	stem, err := keys.NewStem("telemetry")
	require.NoError(t, err)
	changed := make(chan struct{}, 1)
	op, err := d.Put(contract.RowBatch{Keys: stem, Rows: []contract.Row{{Name: []byte(name), Spans: []contract.Span{mem.Region.Slot(slot)}}}}, func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	require.NoError(t, err)
	for {
		if st := op.Poll(nil); st.Access != contract.Open {
			return st.Rows[0]
		}
		<-changed
	}
}

// A bounded store of two chunks, driven through a driver to an eviction
// and a decline: each figure collected equals the store's Stats(), with
// the unit and kind the README lists.
func TestFiguresEqualTheStoresStats(t *testing.T) {
	mp, reader := newReader(t)
	s, err := memdrv.NewBoundedStore(memdrv.StoreOptions{Capacity: 2 * 4096, ChunkBytes: 4096})
	require.NoError(t, err)
	d := memdrv.New(s, memdrv.Options{Logger: slog.New(slog.DiscardHandler)})
	small, err := memdrv.Alloc(4096, 3, contract.Host)
	require.NoError(t, err)
	large, err := memdrv.Alloc(3*4096, 1, contract.Host)
	require.NoError(t, err)
	regs := make([]contract.Registration, 0, 2)
	for _, m := range []*memdrv.Memory{small, large} {
		reg, err := d.Register(m.Region)
		require.NoError(t, err)
		regs = append(regs, reg)
	}
	reg, err := memstore.Observe(mp, s, attribute.String("store", "embedded"))
	require.NoError(t, err)

	for i := range 3 {
		require.Equal(t, contract.Ready, put(t, d, small, i, fmt.Sprint(i)))
	}
	require.Equal(t, contract.Declined, put(t, d, large, 0, "large"), "three chunks in a store of two")
	st := s.Stats()
	require.EqualValues(t, 1, st.Evictions)
	require.EqualValues(t, 1, st.Declines)
	r := collect(t, reader)
	assert.Equal(t, st, s.Stats(), "nothing moved since the snapshot")

	name := attribute.String("store", "embedded")
	type shape struct {
		value     int64
		unit      string
		monotonic bool
	}
	want := map[string]shape{
		"kvshare.memory.capacity":      {st.Capacity, "By", false},
		"kvshare.memory.in_use":        {st.InUse, "By", false},
		"kvshare.memory.objects":       {st.Objects, "{object}", false},
		"kvshare.memory.object.bytes":  {st.Bytes, "By", false},
		"kvshare.memory.evictions":     {st.Evictions, "{object}", true},
		"kvshare.memory.evicted.bytes": {st.EvictedBytes, "By", true},
		"kvshare.memory.declines":      {st.Declines, "{row}", true},
	}
	assert.Len(t, r, len(want), "the store's instruments and no others")
	for metric, w := range want {
		assert.Equal(t, w.value, r.value(t, metric, name), metric)
		_, monotonic := r.sum(t, metric)
		assert.Equal(t, w.monotonic, monotonic, metric)
		assert.Equal(t, w.unit, r[metric].Unit, metric)
		assert.NotEmpty(t, r[metric].Description, metric)
	}
	assert.EqualValues(t, 2*4096, r.value(t, "kvshare.memory.capacity", name))
	assert.EqualValues(t, 2, r.value(t, "kvshare.memory.objects", name))

	require.NoError(t, reg.Unregister())
	assert.Empty(t, collect(t, reader), "unregistered: the store is not read again")
	require.True(t, d.Drain(t.Context()))
	for _, reg := range regs {
		require.NoError(t, d.Unregister(reg))
	}
	require.NoError(t, d.Close())
	require.NoError(t, small.Free())
	require.NoError(t, large.Free())
	require.NoError(t, s.Close())
}

func TestObserveRefusesBadArguments(t *testing.T) {
	mp := noop.NewMeterProvider()
	_, err := memstore.Observe(mp, nil)
	assert.ErrorIs(t, err, telemetry.ErrArgument)
	_, err = memstore.Observe(nil, memdrv.NewStore())
	assert.ErrorIs(t, err, telemetry.ErrArgument)
	_, err = memstore.Observe(mp, memdrv.NewStore(), attribute.String("status", "up"))
	assert.ErrorIs(t, err, telemetry.ErrArgument)
}
