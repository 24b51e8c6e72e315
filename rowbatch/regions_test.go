package rowbatch_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/rowbatch"
)

func TestRegionsIssueHandlesAndKeepTheLiveList(t *testing.T) {
	var rs rowbatch.Regions
	assert.Empty(t, rs.Live())
	assert.False(t, rs.Revoked(0))
	assert.False(t, rs.Revoked(1), "never issued")

	a := contract.SlotRegion{Base: 0x1000, SlotBytes: 16, SlotCount: 2, Len: 32, Kind: contract.Host}
	b := contract.SlotRegion{Base: 0x9000, SlotBytes: 16, SlotCount: 1, Len: 16, Kind: contract.Host}
	ra := rs.Add(a)
	gen := rs.Gen()
	rb := rs.Add(b)
	assert.NotZero(t, ra)
	assert.NotEqual(t, ra, rb)
	assert.Greater(t, rs.Gen(), gen)
	assert.ElementsMatch(t, []contract.SlotRegion{a, b}, rs.Live())
	assert.Equal(t, 2, rs.Len())
	got, ok := rs.Get(rb)
	assert.True(t, ok)
	assert.Equal(t, b, got)

	before := rs.Live()
	rs.Remove(ra)
	assert.ElementsMatch(t, []contract.SlotRegion{a, b}, before, "a live list once handed out never changes")
	assert.Equal(t, []contract.SlotRegion{b}, rs.Live())
	assert.True(t, rs.Revoked(ra))
	assert.False(t, rs.Revoked(rb))
	_, ok = rs.Get(ra)
	assert.False(t, ok)

	gen = rs.Gen()
	rs.Remove(ra)
	assert.Equal(t, gen, rs.Gen(), "removing what is not live changes nothing")
	rs.Restore(ra, a)
	assert.False(t, rs.Revoked(ra))
	assert.ElementsMatch(t, []contract.SlotRegion{a, b}, rs.Live())
	assert.Greater(t, rs.Add(a), rb, "handles are never reused")
}

func TestFirstRowIn(t *testing.T) {
	r := contract.SlotRegion{Base: 0x1000, SlotBytes: 16, SlotCount: 2, Len: 32, Kind: contract.Host}
	b := contract.RowBatch{Rows: []contract.Row{
		{Spans: []contract.Span{{Addr: 0x0ff0, Len: 16}}}, // ends where r begins
		{Spans: []contract.Span{{Addr: 0x2000, Len: 16}}}, // begins where r ends
		{Spans: []contract.Span{{Addr: 0x0ff8, Len: 16}, {Addr: 0x5000, Len: 1}}},
	}}
	assert.Equal(t, 2, rowbatch.FirstRowIn(b, r))
	assert.Equal(t, -1, rowbatch.FirstRowIn(contract.RowBatch{Rows: b.Rows[:2]}, r))
}
