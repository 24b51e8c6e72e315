package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/diskdrv"
)

// shortDisk is a short run of measurement 9 alone: the Short settings'
// rows (64 KiB, 256 KiB, 1 MiB) and lookup of 4096 names, fewer bytes
// a round and one repetition.
func shortDisk() Options {
	o := Short()
	o.Reps = 1
	o.Only = []Measurement{Disk}
	o.Disk.Bytes = 2 << 20
	return o
}

// runDisk runs o and checks what every run of measurement 9 holds:
// every unit stepped, one case a row size with its rows, every row Ready
// on both sides, one figure a repetition, the lookup's two modes, and
// every goal judged.
func runDisk(t *testing.T, o Options) *diskReport {
	t.Helper()
	var steps []string
	rep, err := Run(t.Context(), o, func(_, _ int, what string) { steps = append(steps, what) }, nil)
	require.NoError(t, err)
	assert.Len(t, steps, units(o)+1, "every unit, then done")
	d := rep.Disk
	require.NotNil(t, d)
	require.Len(t, d.Cases, len(o.Disk.RowSizes))
	for i, c := range d.Cases {
		assert.Equal(t, o.Disk.RowSizes[i], c.RowBytes)
		assert.Equal(t, o.Disk.rows(c.RowBytes), c.Rows)
		assert.Zero(t, c.KvshareNotReady, "%s: every kvshare row Ready", size(c.RowBytes))
		assert.Zero(t, c.FloorNotReady, "%s: every floor row Ready", size(c.RowBytes))
		for _, s := range []spread{c.KvsharePutMBs, c.KvshareGetMBs, c.FloorPutMBs, c.FloorGetMBs, c.PutRatio, c.GetRatio} {
			assert.Equal(t, o.Reps, s.N, "one figure a repetition")
			assert.Positive(t, s.Median)
		}
	}
	moved := int64(0)
	for _, c := range d.Cases {
		moved += int64(2 * c.Rows * (o.Reps + 1)) // each way, the warming round too
	}
	assert.Equal(t, moved, d.DirectRows+d.CachedRows, "every row moved counted, direct or not")
	require.Len(t, d.Lookup, 2, "stop at first, every row")
	for _, c := range d.Lookup {
		assert.Equal(t, o.Disk.LookupNames, c.Names)
		assert.Equal(t, o.Disk.LookupNames/2, c.Present)
		assert.Equal(t, o.Reps, c.Ratio.N)
		assert.Positive(t, c.FloorNsPerName.Median)
	}
	assert.Len(t, rep.Goals, 2*len(o.Disk.RowSizes)+2)
	for _, g := range rep.Goals {
		assert.Equal(t, int(Disk), g.Measurement, g.Name)
		assert.Equal(t, o.Reps, g.Value.N, g.Name)
	}
	return d
}

// With no store given, measurement 9 runs in a temporary directory,
// says so, and removes it; the report's table names the 64 KiB, 256 KiB
// and 1 MiB rows and the lookup of 4096 names.
func TestDiskMeasurementInATemporaryDirectory(t *testing.T) {
	o := shortDisk()
	d := runDisk(t, o)
	assert.Equal(t, []int64{64 << 10, 256 << 10, 1 << 20}, []int64{d.Cases[0].RowBytes, d.Cases[1].RowBytes, d.Cases[2].RowBytes})
	m := regexp.MustCompile(`^a temporary directory, (/\S+)/store \(durability none\)$`).FindStringSubmatch(d.Where)
	require.NotNil(t, m, d.Where)
	_, err := os.Stat(m[1])
	assert.ErrorIs(t, err, os.ErrNotExist, "the temporary directory is removed")
	assert.Equal(t, "a sibling folder, "+m[1]+"/floor", d.FloorAt)
	if diskdrv.DirectIOWorks(os.TempDir()) == nil {
		assert.Equal(t, "used: O_DIRECT for page-aligned rows, on both sides", d.DirectIO)
		assert.Zero(t, d.CachedRows, "page-aligned rows all move direct")
	} else {
		assert.Contains(t, d.DirectIO, "not used")
	}

	var table bytes.Buffer
	WriteTable(&table, &Report{Disk: d})
	for _, want := range []string{"\n9. The disk tier: kvshare over a diskdrv driver in a temporary directory", "POSIX_FADV_DONTNEED",
		"\n   64 KiB ", "\n   256 KiB ", "\n   1 MiB ", "\n   4096   stop at first", "\n   4096   every row"} {
		assert.Contains(t, table.String(), want)
	}
}

// Over a [disk] store file, measurement 9 runs in its directory under
// the run's key prefix, with the file's settings, and leaves the store
// as it found it: no object of the run, no floor folder beside it, the
// directory's lock given back.
func TestDiskMeasurementOverAStoreFile(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "kv")
	path := filepath.Join(root, "disk.toml")
	require.NoError(t, os.WriteFile(path, fmt.Appendf(nil, "[blob]\nkey_prefix = \"team\"\n[disk]\ndir = %q\ncapacity = 0\ndurability = \"data\"\nworkers = 2\n", dir), 0o644))
	o := shortDisk()
	o.Disk.StorePath = path
	o.Disk.RowSizes = []int64{64 << 10, 1 << 20}
	o.Disk.LookupNames = 64
	d := runDisk(t, o)
	assert.Equal(t, "the directory of "+path+", "+dir+" (durability data)", d.Where)
	assert.Regexp(t, `^team/bench/\d{8}t\d{6}z-[0-9a-f]{8}$`, d.KeyPrefix)
	assert.Equal(t, 2, d.Workers)
	assert.Regexp(t, `^a sibling folder on the same file system, `+regexp.QuoteMeta(dir)+`-bench-floor-\d+$`, d.FloorAt)

	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	assert.ElementsMatch(t, []string{"kv", "disk.toml"}, left, "the floor's folder is removed")
	s, err := diskdrv.Open(dir, diskdrv.Options{})
	require.NoError(t, err, "the lock is given back")
	defer s.Close()
	_, objects := s.Used()
	assert.Zero(t, objects, "every object of the run removed")
}
