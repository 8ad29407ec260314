package main

import (
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// tierColors are the colours of the tiers, in the order of tiers, then the
// majority of 5's, that of fast on an engine shared with adaptive and
// that of the best single session.
var tierColors = []color.Color{
	color.RGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff},
	color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff},
	color.RGBA{R: 0x75, G: 0x70, B: 0xb3, A: 0xff},
	color.RGBA{R: 0xe7, G: 0x29, B: 0x8a, A: 0xff},
	color.RGBA{R: 0x66, G: 0x66, B: 0x66, A: 0xff},
	color.RGBA{R: 0x66, G: 0xa6, B: 0x1e, A: 0xff},
	color.RGBA{R: 0xa6, G: 0x76, B: 0x1d, A: 0xff},
}

// A chartPanel is one panel of a reliability chart: a line per series.
type chartPanel struct {
	title  string
	series []series
}

// A series is one line of a chart panel: calls' stats, and the colour's
// index in tierColors.
type series struct {
	name  string
	color int
	s     stats
}

// chart draws the reliability chart of workload wl: for each variant
// measured, a panel of stated confidence (the mean of a bin of 0.1)
// against observed accuracy in that bin, one line per tier and one for
// the majority of 5 (and, with reputation on, one for fast on an engine
// shared with adaptive), over the measured calls; bins of fewer than
// minBinCalls calls are left out. A perfectly calibrated tier lies on the
// diagonal. It writes SVG.
func (r *report) chart(w io.Writer, wl *workload) error {
	var panels []chartPanel
	for _, v := range r.settings() {
		cp := chartPanel{title: fmt.Sprintf("%s: reputation %s", wl.name, v)}
		for i, pol := range tiers {
			cp.series = append(cp.series, series{string(pol), i, r.measured(r.get(wl.name, pol, v))})
		}
		if calls := r.shared(wl.name, v); calls != nil {
			cp.series = append(cp.series, series{sharedName, len(tiers) + 1, r.measured(calls)})
		}
		cp.series = append(cp.series, series{"majority of 5", len(tiers), r.measured(r.five[wl.name])})
		panels = append(panels, cp)
	}
	return reliabilityChart(w, panels)
}

// reliabilityChart draws panels side by side, each of stated confidence
// against observed accuracy from 0.5 to 1 with the diagonal dashed. It
// writes SVG.
func reliabilityChart(w io.Writer, panels []chartPanel) error {
	plots := make([][]*plot.Plot, 1)
	for _, cp := range panels {
		p := plot.New()
		p.Title.Text = cp.title
		p.X.Label.Text = "stated confidence (mean of the bin)"
		p.Y.Label.Text = "observed accuracy"
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0.5, 1, 0.5, 1 // a winner's confidence is at least 1/2
		p.Add(plotter.NewGrid())
		diag, err := plotter.NewLine(plotter.XYs{{X: 0.5, Y: 0.5}, {X: 1, Y: 1}})
		if err != nil {
			return err
		}
		diag.LineStyle.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
		p.Add(diag)
		p.Legend.Top, p.Legend.Left = false, false
		p.Legend.XOffs, p.Legend.YOffs = -vg.Points(8), vg.Points(8)
		for _, sr := range cp.series {
			if err := addBins(p, sr.name, tierColors[sr.color%len(tierColors)], sr.s); err != nil {
				return err
			}
		}
		plots[0] = append(plots[0], p)
	}
	width := vg.Length(len(panels)) * 5 * vg.Inch
	c := vgsvg.New(width, 5*vg.Inch)
	dc := draw.New(c)
	canvases := plot.Align(plots, draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Points(12)}, dc)
	for j, p := range plots[0] {
		p.Draw(canvases[0][j])
	}
	_, err := c.WriteTo(w)
	return err
}

// addBins adds the bins of s holding at least minBinCalls calls to p as
// a line with points, named name.
func addBins(p *plot.Plot, name string, c color.Color, s stats) error {
	var xys plotter.XYs
	for _, b := range s.bins {
		if b.calls >= minBinCalls {
			xys = append(xys, plotter.XY{X: b.stated(), Y: b.observed()})
		}
	}
	if len(xys) == 0 {
		return nil
	}
	l, pts, err := plotter.NewLinePoints(xys)
	if err != nil {
		return err
	}
	l.LineStyle.Color, l.LineStyle.Width = c, vg.Points(1.5)
	pts.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
	p.Add(l, pts)
	p.Legend.Add(name, l, pts)
	return nil
}
