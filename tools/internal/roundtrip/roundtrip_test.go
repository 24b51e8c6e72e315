package roundtrip

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
)

func small() Config {
	c := Defaults()
	c.Rows, c.RowBytes, c.ViewRows = 37, 4096+7, 8
	return c
}

func TestRunMovesEveryByte(t *testing.T) {
	var calls []int
	rep, err := Run(t.Context(), small(), func(phase string, done, total int) {
		require.Equal(t, 37, total)
		calls = append(calls, done)
	})
	require.NoError(t, err)
	assert.True(t, rep.OK(), "report: %+v", rep)
	assert.Equal(t, int64(37), rep.Publish.Rows[contract.Ready])
	assert.Equal(t, int64(37), rep.Fetch.Rows[contract.Ready])
	assert.Equal(t, 37, rep.Fetch.Delivered)
	assert.Equal(t, int64(37*(4096+7)), rep.Fetch.Bytes)
	assert.Equal(t, 5, rep.Publish.Attempts, "37 rows in views of 8")
	assert.Zero(t, rep.Mismatches)
	assert.Zero(t, rep.RowsLent)
	assert.True(t, rep.Freed)
	// Progress climbs to the total once per phase.
	require.Len(t, calls, 10)
	assert.Equal(t, 37, calls[4])
	assert.Equal(t, 37, calls[9])
}

func TestRunRefusesBadConfig(t *testing.T) {
	for name, edit := range map[string]func(*Config){
		"rows":      func(c *Config) { c.Rows = 0 },
		"row bytes": func(c *Config) { c.RowBytes = -1 },
		"view rows": func(c *Config) { c.ViewRows = 0 },
		"workers":   func(c *Config) { c.Workers = 0 },
		"timeout":   func(c *Config) { c.Timeout = 0 },
		"1 TiB":     func(c *Config) { c.Rows, c.RowBytes = 1<<20, 1<<21 },
	} {
		t.Run(name, func(t *testing.T) {
			c := small()
			edit(&c)
			_, err := Run(t.Context(), c, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), name)
		})
	}
}

func TestRunReportsTimeout(t *testing.T) {
	c := small()
	c.Timeout = time.Nanosecond
	_, err := Run(context.Background(), c, nil)
	require.Error(t, err)
}

// mapped maps memory for a test, freed at its end (never lent).
func mapped(t *testing.T, slotBytes int64, slots int) *hostmem.Memory {
	t.Helper()
	m, err := hostmem.Map(hostmem.Geometry{SlotBytes: slotBytes, SlotCount: slots}, hostmem.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Free()) })
	return m
}

func TestCompareCountsDifferentSlots(t *testing.T) {
	a, b := mapped(t, 64, 4), mapped(t, 64, 4)
	fill(a, 9)
	fill(b, 9)
	assert.Zero(t, compare(a, b))
	b.Slot(0, 2)[63] ^= 1
	b.Slot(0, 0)[0] ^= 1
	assert.Equal(t, 2, compare(a, b))
}

func TestReportOK(t *testing.T) {
	good := Report{Freed: true}
	assert.True(t, good.OK())
	for _, bad := range []Report{
		{Freed: true, Mismatches: 1},
		{Freed: true, Undelivered: 1},
		{Freed: true, RowsLent: 1},
		{Freed: true, BytesLent: 1},
		{},
	} {
		assert.False(t, bad.OK(), "%+v", bad)
	}
}

func TestPoisonFillsEverySlot(t *testing.T) {
	m := mapped(t, 4096+7, 3)
	poison(m)
	for i := range 3 {
		for _, b := range m.Slot(0, i) {
			require.Equal(t, byte(poisonByte), b)
		}
	}
}
