package bench

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// ErrPlotFormat: a plot file name that ends neither in .svg nor in .png.
var ErrPlotFormat = errors.New("bench: the plot file must end in .svg or .png")

// WritePlot draws the report's figures into one image at path (.svg or
// .png), two panels a row: settle latency against rows per submission
// with the floor drawn in (measurement 1), bandwidth against row size
// with the copy floor (4), the engine loop's items per window over time
// (2), and the real pool's rates against the raw loop's (5) — each panel
// only when its measurement ran.
func WritePlot(path string, r *Report) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".svg" && ext != ".png" {
		return fmt.Errorf("%w: %q", ErrPlotFormat, path)
	}
	panels, err := plots(r)
	if err != nil {
		return err
	}
	if len(panels) == 0 {
		return errors.New("bench: nothing to plot: measurements 1, 2, 4 and 5 did not run")
	}
	cols := min(2, len(panels))
	rows := (len(panels) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
		for j := range cols {
			if k := i*cols + j; k < len(panels) {
				grid[i][j] = panels[k]
			}
		}
	}
	w, h := vg.Length(cols)*15*vg.Centimeter, vg.Length(rows)*10*vg.Centimeter
	var canvas interface {
		vg.CanvasSizer
		io.WriterTo
	}
	if ext == ".svg" {
		canvas = vgsvg.New(w, h)
	} else {
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(110))}
	}
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Centimeter, PadY: vg.Centimeter,
		PadTop: 4 * vg.Millimeter, PadBottom: 4 * vg.Millimeter, PadLeft: 4 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	for i, row := range plot.Align(grid, tiles, dc) {
		for j, c := range row {
			if grid[i][j] != nil {
				grid[i][j].Draw(c)
			}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := canvas.WriteTo(f); err != nil {
		return errors.Join(err, f.Close())
	}
	return f.Close()
}

// Plottable reports whether a run with o draws at least one panel:
// measurement 1, 2 or 4 runs, or 5 with a pool.
func Plottable(o Options) bool {
	return o.runs(SettleLatency) || o.runs(EngineLoop) || o.runs(Bandwidth) || (o.runs(RealPool) && o.poolGiven())
}

// plots builds the panels of the measurements that ran.
func plots(r *Report) ([]*plot.Plot, error) {
	var out []*plot.Plot
	for _, build := range []func(*Report) (*plot.Plot, error){settlePlot, bandwidthPlot, loopPlot, poolPlot} {
		p, err := build(r)
		if err != nil {
			return nil, err
		}
		if p != nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// Colours: kvshare solid, its floor dashed in the same colour.
var (
	blue   = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	orange = color.RGBA{R: 230, G: 120, B: 20, A: 255}
	green  = color.RGBA{R: 44, G: 160, B: 44, A: 255}
	grey   = color.RGBA{R: 110, G: 110, B: 110, A: 255}
	dashes = []vg.Length{vg.Points(5), vg.Points(3)}
)

// series is one line: points with error bars from the spreads.
type series struct {
	name   string
	colour color.Color
	dashed bool
	xs     []float64
	ys     []spread
}

// add draws s on p: a line through the medians, points, and bars from
// the smallest to the largest repetition.
func (s series) add(p *plot.Plot) error {
	pts := make(plotter.XYs, len(s.xs))
	errs := make(plotter.YErrors, len(s.xs))
	for i := range s.xs {
		pts[i] = plotter.XY{X: s.xs[i], Y: s.ys[i].Median}
		errs[i].Low, errs[i].High = s.ys[i].Median-s.ys[i].Min, s.ys[i].Max-s.ys[i].Median
	}
	line, points, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	line.Color, line.Width = s.colour, vg.Points(1.5)
	if s.dashed {
		line.Dashes = dashes
	}
	points.Color, points.Shape = s.colour, draw.CircleGlyph{}
	bars, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{pts, errs})
	if err != nil {
		return err
	}
	bars.Color = s.colour
	p.Add(line, points, bars)
	p.Legend.Add(s.name, line, points)
	return nil
}

// newPlot is a panel with the common settings.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	return p
}

// headroom starts the y axis at 0 and leaves the top third of the
// panel to the legend.
func headroom(p *plot.Plot) {
	p.Y.Min = 0
	p.Y.Max *= 1.45
}

// logTicks puts ticks at the given values, labelled by label.
func logTicks(p *plot.Plot, xs []float64, label func(float64) string) {
	p.X.Scale = plot.LogScale{}
	ticks := make([]plot.Tick, len(xs))
	for i, x := range xs {
		ticks[i] = plot.Tick{Value: x, Label: label(x)}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = xs[0]/1.3, xs[len(xs)-1]*1.3
}
