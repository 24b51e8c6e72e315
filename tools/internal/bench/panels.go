package bench

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// settlePlot: mean submission-to-settle per repetition against rows per
// tick, kvshare and its floor, fetch alone and beside publishes.
func settlePlot(r *Report) (*plot.Plot, error) {
	s := r.Settle
	if s == nil || len(s.Cases) == 0 {
		return nil, nil
	}
	p := newPlot(fmt.Sprintf("1. Submission to settle (SDK calls sleep %g ms)", s.SDKLatencyMs), "rows per tick (1×256, 4×256, 1×4096)", "mean settle, ms")
	var xs []float64
	for _, m := range settleModes {
		var kv, fl series
		colour := blue
		label := "fetch"
		if m == besidePublishes {
			colour, label = orange, "every submission, fetch beside publish"
		}
		kv = series{name: "kvshare: " + label, colour: colour}
		fl = series{name: "floor: " + label, colour: colour, dashed: true}
		xs = xs[:0]
		for _, c := range s.Cases {
			if c.Mode != m.String() {
				continue
			}
			var kvMeans, flMeans []float64
			for _, rp := range c.Reps {
				kvMeans, flMeans = append(kvMeans, rp.KvshareMeanMs), append(flMeans, rp.FloorMeanMs)
			}
			x := float64(c.Rows)
			xs = append(xs, x)
			kv.xs, kv.ys = append(kv.xs, x), append(kv.ys, spreadOf(kvMeans))
			fl.xs, fl.ys = append(fl.xs, x), append(fl.ys, spreadOf(flMeans))
		}
		if err := kv.add(p); err != nil {
			return nil, err
		}
		if err := fl.add(p); err != nil {
			return nil, err
		}
	}
	logTicks(p, xs, func(x float64) string { return fmt.Sprintf("%.0f", x) })
	headroom(p)
	return p, nil
}

// bandwidthPlot: round-trip GB/s against row size, kvshare over the
// in-memory store and the copy floor, with kvshare's publish and fetch.
func bandwidthPlot(r *Report) (*plot.Plot, error) {
	b := r.Band
	if b == nil || len(b.Cases) == 0 {
		return nil, nil
	}
	p := newPlot("4. Publish + fetch through the in-memory store", "row size", "GB/s")
	lines := []series{
		{name: "kvshare round trip", colour: blue},
		{name: "copy floor round trip", colour: blue, dashed: true},
		{name: "kvshare publish", colour: orange},
		{name: "kvshare fetch", colour: green},
	}
	var xs []float64
	for _, c := range b.Cases {
		x := float64(c.RowBytes)
		xs = append(xs, x)
		for i, y := range []spread{c.KvshareGBs, c.FloorGBs, c.KvsharePublishGBs, c.KvshareFetchGBs} {
			lines[i].xs, lines[i].ys = append(lines[i].xs, x), append(lines[i].ys, y)
		}
	}
	for _, s := range lines {
		if err := s.add(p); err != nil {
			return nil, err
		}
	}
	logTicks(p, xs, func(x float64) string { return size(int64(x)) })
	headroom(p)
	return p, nil
}

// loopPlot: the engine loop's items per window over the phase, alone,
// beside the floor's traffic and beside kvshare's (the last repetition).
func loopPlot(r *Report) (*plot.Plot, error) {
	l := r.Loop
	if l == nil || len(l.Trace.Alone) == 0 {
		return nil, nil
	}
	p := newPlot(fmt.Sprintf("2. Engine loop: items per %g ms window (last repetition)", l.WindowMs), "time in the phase, ms", "items per window")
	for _, t := range []struct {
		name   string
		counts []int
		colour color.Color
		dashed bool
	}{{"alone", l.Trace.Alone, grey, false}, {"beside the floor's traffic", l.Trace.Floor, blue, true}, {"beside kvshare's traffic", l.Trace.Kvshare, orange, false}} {
		pts := make(plotter.XYs, len(t.counts))
		for i, n := range t.counts {
			pts[i] = plotter.XY{X: float64(i) * l.WindowMs, Y: float64(n)}
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		line.Color, line.Width = t.colour, vg.Points(1)
		if t.dashed {
			line.Dashes = dashes
		}
		p.Add(line)
		p.Legend.Add(t.name, line)
	}
	headroom(p)
	return p, nil
}

// poolPlot: Ready GB/s each way against row size, kvshare and the raw
// loop.
func poolPlot(r *Report) (*plot.Plot, error) {
	pr := r.Pool
	if pr == nil || len(pr.Cases) == 0 {
		return nil, nil
	}
	p := newPlot("5. Real pool: Ready rows, GB/s each way", "row size", "GB/s")
	lines := []series{
		{name: "kvshare put", colour: blue},
		{name: "raw loop put", colour: blue, dashed: true},
		{name: "kvshare get", colour: orange},
		{name: "raw loop get", colour: orange, dashed: true},
	}
	var xs []float64
	for _, c := range pr.Cases {
		x := float64(c.RowBytes)
		xs = append(xs, x)
		for i, y := range []spread{c.KvsharePutGBs, c.RawPutGBs, c.KvshareGetGBs, c.RawGetGBs} {
			lines[i].xs, lines[i].ys = append(lines[i].xs, x), append(lines[i].ys, y)
		}
	}
	for _, s := range lines {
		if err := s.add(p); err != nil {
			return nil, err
		}
	}
	logTicks(p, xs, func(x float64) string { return size(int64(x)) })
	headroom(p)
	return p, nil
}
