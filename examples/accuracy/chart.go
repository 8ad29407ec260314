package main

import (
	"fmt"
	"image/color"
	"io"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vouchkit/vouch/trust"
)

// chart draws accuracy against runs spent, the cost–accuracy frontier:
// for each error rate (the easy workload's included), the
// fixed tiers as labelled points, oracle's accuracy when answered as a
// hollow triangle, adaptive over its threshold sweep as a line, and the
// binomial majority of 1, 3 and 5 as a dashed line. It writes SVG.
func (r *report) chart(w io.Writer) error {
	rateColors := []color.Color{ // one per error rate, in order
		color.RGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff},
		color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff},
		color.RGBA{R: 0x75, G: 0x70, B: 0xb3, A: 0xff},
		color.RGBA{R: 0xe7, G: 0x29, B: 0x8a, A: 0xff},
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Accuracy against runs spent (%d claims per point, seed %d)", r.cfg.calls, r.cfg.seed)
	p.X.Label.Text = "runs launched per call"
	p.Y.Label.Text = "accuracy: share of calls with the correct status (%)"
	p.X.Min, p.X.Max = 0, 6
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(8), vg.Points(8)

	for i, rate := range r.cfg.rates {
		c := rateColors[i%len(rateColors)]

		binom := plotter.XYs{{X: 1, Y: 100 * (1 - rate)}, {X: 3, Y: 100 * majority(3, rate)}, {X: 5, Y: 100 * majority(5, rate)}}
		bl, err := plotter.NewLine(binom)
		if err != nil {
			return err
		}
		bl.LineStyle.Color, bl.LineStyle.Width = c, vg.Points(1)
		bl.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}

		var fixed plotter.XYs
		var names []string
		for _, pol := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyOracle} {
			t := r.get(rate, pol, defaultThreshold)
			fixed = append(fixed, plotter.XY{X: t.meanReplicas(), Y: 100 * t.accuracy()})
			names = append(names, string(pol))
		}
		fs, err := plotter.NewScatter(fixed)
		if err != nil {
			return err
		}
		fs.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
		labels, err := plotter.NewLabels(plotter.XYLabels{XYs: fixed, Labels: names})
		if err != nil {
			return err
		}
		labels.Offset = vg.Point{X: vg.Points(5), Y: vg.Points(-3)}
		for j := range labels.TextStyle {
			labels.TextStyle[j].Color = c
		}

		o := r.get(rate, trust.PolicyOracle, defaultThreshold)
		answered, err := plotter.NewScatter(plotter.XYs{{X: o.meanReplicas(), Y: 100 * o.answeredRight()}})
		if err != nil {
			return err
		}
		answered.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(3.5), Shape: draw.TriangleGlyph{}}

		var sweep plotter.XYs
		for _, th := range r.thresholds() {
			key := th
			if th == serviceDefault && !slices.Contains(r.cfg.sweep, th) {
				key = defaultThreshold
			}
			t := r.get(rate, trust.PolicyAdaptive, key)
			sweep = append(sweep, plotter.XY{X: t.meanReplicas(), Y: 100 * t.accuracy()})
		}
		al, ap, err := plotter.NewLinePoints(sweep)
		if err != nil {
			return err
		}
		al.LineStyle.Color, al.LineStyle.Width = c, vg.Points(1.5)
		ap.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(2.5), Shape: draw.BoxGlyph{}}
		a := r.get(rate, trust.PolicyAdaptive, defaultThreshold)
		adaptive, err := plotter.NewLabels(plotter.XYLabels{
			XYs:    plotter.XYs{{X: a.meanReplicas(), Y: 100 * a.accuracy()}},
			Labels: []string{fmt.Sprintf("adaptive %g", serviceDefault)},
		})
		if err != nil {
			return err
		}
		adaptive.Offset = vg.Point{X: vg.Points(5), Y: vg.Points(3)}
		adaptive.TextStyle[0].Color = c

		p.Add(bl, al, ap, fs, answered, labels, adaptive)
		p.Legend.Add(fmt.Sprintf("p = %.3g: fast, safe, oracle", rate), fs)
		p.Legend.Add(fmt.Sprintf("p = %.3g: adaptive over thresholds", rate), al, ap)
		p.Legend.Add(fmt.Sprintf("p = %.3g: oracle when answered", rate), answered)
		p.Legend.Add(fmt.Sprintf("p = %.3g: binomial majority of 1, 3, 5", rate), bl)
	}
	wt, err := p.WriterTo(9*vg.Inch, 6*vg.Inch, "svg")
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}
