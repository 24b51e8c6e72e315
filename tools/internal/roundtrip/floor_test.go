package roundtrip

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/tools/internal/poolfloor"
)

// mooncakeFile writes a store file of a pool nothing listens on, with
// the lines given added, and reads it.
func mooncakeFile(t *testing.T, blob, mooncake string) *Mooncake {
	t.Helper()
	path := filepath.Join(t.TempDir(), "store.toml")
	require.NoError(t, os.WriteFile(path, []byte("[blob]\n"+blob+`
[mooncake]
master = "10.0.0.1:25151"
metadata_server = "http://10.0.0.1:28180/metadata"
local_hostname = "10.0.0.2"
`+mooncake), 0o644))
	m, err := MooncakeStore(path, nil)
	require.NoError(t, err)
	return m
}

// The floor has the job's shape: its rows, their size and views, one
// call per view where the caps allow (as the driver cuts a view), the
// [blob] caps cutting a view as the backend does, and as many
// goroutines as the driver has calls of a direction in the store.
func TestFloorHasTheJobsShape(t *testing.T) {
	for _, c := range []struct {
		name           string
		blob, mooncake string
		parts, workers int
	}{
		{"the file's defaults", "", "", 16, 1},
		{"four calls in flight", "", "workers = 4\ncalls_in_flight = 4\n", 16, 4},
		{"calls_in_flight over the workers", "", "workers = 2\ncalls_in_flight = 4\n", 16, 2},
		{"the backend's rows per call", "rows_per_call = 32\n", "", 32, 1},
		{"the backend's bytes per call", "bytes_per_call = 4194304\n", "", 64, 1},
		{"the driver's rows per call", "", "rows_per_call = 16\n", 64, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := mooncakeFile(t, c.blob, c.mooncake)
			cfg := Defaults()
			m.Configure(&cfg)
			s := m.floorShape(cfg)
			require.NoError(t, s.Validate())
			assert.Equal(t, cfg.Rows, s.Rows)
			assert.Equal(t, cfg.RowBytes, s.RowBytes)
			assert.Equal(t, cfg.ViewRows, s.ViewRows)
			assert.Equal(t, c.workers, s.Workers)
			stem, err := keys.NewStem("floor/test")
			require.NoError(t, err)
			addrs := make([]uintptr, cfg.Rows)
			sub, err := s.Prepare(contract.PutDir, stem, floorNames(0, cfg.Rows), addrs)
			require.NoError(t, err)
			assert.Len(t, sub.Parts(), c.parts)
			assert.GreaterOrEqual(t, len(sub.Parts()), len(views(cfg)), "never fewer calls than the job has views")
		})
	}
}

// A job shape the floor cannot take is refused before a client is
// opened (the file's master does not exist), naming the field.
func TestFloorRefusesABadShapeBeforeOpening(t *testing.T) {
	m := mooncakeFile(t, "", "")
	for _, c := range []struct {
		name string
		edit func(*Config)
		msg  string
	}{
		{"no rows", func(c *Config) { c.Rows = 0 }, "rows is 0"},
		{"no row bytes", func(c *Config) { c.RowBytes = 0 }, "row bytes is 0"},
		{"no view rows", func(c *Config) { c.ViewRows = -1 }, "view rows is -1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Defaults()
			m.Configure(&cfg)
			c.edit(&cfg)
			_, err := m.openFloor(t.Context(), cfg)
			require.ErrorIs(t, err, poolfloor.ErrShape)
			assert.ErrorContains(t, err, c.msg)
		})
	}
}

func TestFloorNeedsAMooncakePool(t *testing.T) {
	cfg := small()
	cfg.Floor = true
	rep, err := Run(t.Context(), cfg, nil)
	require.ErrorIs(t, err, ErrNoFloor)
	assert.Nil(t, rep.Floor)
	assert.Zero(t, rep.Publish.Attempts, "nothing ran")
}

// Each round of the floor, warming ones included, has names of its own:
// a put never overwrites.
func TestFloorRoundsHaveNamesOfTheirOwn(t *testing.T) {
	seen := map[string]bool{}
	for round := range 3 {
		for _, n := range floorNames(round, 100) {
			require.Len(t, n, 16)
			require.False(t, seen[string(n)], "round %d: %x twice", round, n)
			seen[string(n)] = true
		}
	}
}

func TestRatiosAreOverTheMeanOfBothRounds(t *testing.T) {
	phase := func(bytes int64, secs float64) Phase {
		return Phase{Bytes: bytes, Elapsed: time.Duration(secs * float64(time.Second))}
	}
	rep := Report{Publish: phase(1e9, 1), Fetch: phase(3e9, 1)}
	pub, fetch := rep.Ratios()
	assert.Zero(t, pub, "no floor: no ratio")
	assert.Zero(t, fetch)
	rep.Floor = &Floor{
		Before: FloorRound{Publish: phase(1e9, 1), Fetch: phase(2e9, 1)},
		After:  FloorRound{Publish: phase(3e9, 1), Fetch: phase(2e9, 1)},
	}
	pub, fetch = rep.Ratios()
	assert.InDelta(t, 0.5, pub, 1e-9, "1 GB/s over the mean of 1 and 3")
	assert.InDelta(t, 1.5, fetch, 1e-9, "3 GB/s over 2")
	rep.Floor.Before.Fetch, rep.Floor.After.Fetch = Phase{}, Phase{}
	_, fetch = rep.Ratios()
	assert.Zero(t, fetch, "a floor that moved nothing gives no ratio")
}
