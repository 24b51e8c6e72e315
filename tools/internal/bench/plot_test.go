package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlotsAreWrittenAndHoldTheData(t *testing.T) {
	rep := tinyReport(t)
	rep.Pool = &poolReport{Cases: []poolCase{
		{RowBytes: 4096, KvsharePutGBs: spread{Median: 1, Min: 1, Max: 1, N: 1}, RawPutGBs: spread{Median: 1, N: 1}},
		{RowBytes: 16384, KvsharePutGBs: spread{Median: 2, Min: 1, Max: 3, N: 1}, RawPutGBs: spread{Median: 2, N: 1}},
	}}
	dir := t.TempDir()
	svg := filepath.Join(dir, "bench.svg")
	require.NoError(t, WritePlot(svg, rep))
	b, err := os.ReadFile(svg)
	require.NoError(t, err)
	assert.Contains(t, string(b), "<svg")
	for _, title := range []string{"1. Submission to settle", "4. Publish + fetch", "2. Engine loop", "5. Real pool"} {
		assert.Contains(t, string(b), title)
	}
	assert.Contains(t, string(b), "floor: fetch", "the floor is drawn in")
	assert.Contains(t, string(b), "copy floor round trip")

	png := filepath.Join(dir, "bench.png")
	require.NoError(t, WritePlot(png, rep))
	b, err = os.ReadFile(png)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")), "a PNG")
	assert.Greater(t, len(b), 10_000, "not an empty image")
}

func TestPlotRefusesOtherFormatsAndEmptyReports(t *testing.T) {
	dir := t.TempDir()
	require.ErrorIs(t, WritePlot(filepath.Join(dir, "bench.pdf"), &Report{}), ErrPlotFormat)
	err := WritePlot(filepath.Join(dir, "bench.svg"), &Report{Pool: &poolReport{Skipped: skippedPool}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nothing to plot")
	assert.NoFileExists(t, filepath.Join(dir, "bench.svg"))
}

func TestPlottable(t *testing.T) {
	o := Defaults()
	assert.True(t, Plottable(o))
	o.Only = []Measurement{RowCPU, RealPool}
	assert.False(t, Plottable(o), "3 has no panel, 5 none without a pool")
	o.Pool.MooncakeDir = "/m"
	assert.True(t, Plottable(o))
}
