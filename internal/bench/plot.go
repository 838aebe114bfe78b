package bench

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"

	"github.com/ctxtop/ctxtop/internal/load"
)

// Chart is what the SVG shows, built from the cells so the drawing knows
// nothing of the experiments: categories along x (mode × pinning), a bar
// per category with whiskers over the runs, and a line per named series
// across the same categories (a working-set size, once cells carry one:
// see seriesName).
type Chart struct {
	Title, XLabel, YLabel string
	Categories            []string
	Bars                  []Point // by category; a zero Point is no bar
	Lines                 []Series
}

// Point is a figure over a cell's runs; Pinned is how many CPUs its cell
// was pinned to (0, 1 or 2), which colours its bar.
type Point struct {
	Median, Min, Max float64
	Pinned           int
}

// Series is one line: a point per category, NaN median where it has none.
type Series struct {
	Name   string
	Points []Point
}

// whiskerRoom is how far above the tallest median the axis reaches; a
// slower run is drawn to there and labelled with its figure.
const whiskerRoom = 2

// BarColors fill the bars by pinning (unpinned, one CPU, two CPUs), so a
// test can count the bars in the SVG.
var BarColors = [3]color.RGBA{
	{R: 0x3b, G: 0x6e, B: 0xa5, A: 0xff},
	{R: 0xe0, G: 0x8e, B: 0x0b, A: 0xff},
	{R: 0x7a, G: 0x5c, B: 0x8e, A: 0xff},
}

var pinningNames = [3]string{"unpinned", "one CPU", "two CPUs"}

var lineColors = []color.Color{
	color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff},
	color.RGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff},
	color.RGBA{R: 0x75, G: 0x70, B: 0xb3, A: 0xff},
	color.RGBA{R: 0xe7, G: 0x29, B: 0x8a, A: 0xff},
	color.RGBA{R: 0x66, G: 0xa6, B: 0x1e, A: 0xff},
}

// seriesName puts a cell on a line instead of a bar: the cells of one
// working-set size share a line.
func seriesName(c *Cell) string {
	if c.Experiment != WorkingSet {
		return ""
	}
	return "working set " + load.FormatSize(c.Config.WorkingSet)
}

// categoryName is the x label of a cell: mode over pinning.
func categoryName(c *Cell) string {
	return string(c.Config.Mode) + "\n" + shortPinning(c.Config.CPUs)
}

// ChartOf is the chart of ns per round trip for cells with a figure.
func ChartOf(cells []*Cell) Chart {
	ch := Chart{
		XLabel: "mode, pinning",
		YLabel: "ns per round trip",
		Title:  "What a round trip costs: median of " + runsLabel(cells) + ", whiskers span the runs (one cut at the axis says its max)",
	}
	index := map[string]int{}
	series := map[string]int{}
	for _, c := range cells {
		tr := c.Trip()
		if !tr.OK() {
			continue
		}
		cat := categoryName(c)
		i, ok := index[cat]
		if !ok {
			i = len(ch.Categories)
			index[cat] = i
			ch.Categories = append(ch.Categories, cat)
			ch.Bars = append(ch.Bars, Point{})
			for k := range ch.Lines {
				ch.Lines[k].Points = append(ch.Lines[k].Points, Point{Median: math.NaN()})
			}
		}
		p := Point{Median: tr.Median, Min: tr.Min, Max: tr.Max, Pinned: min(len(c.Config.CPUs), 2)}
		name := seriesName(c)
		if name == "" {
			ch.Bars[i] = p
			continue
		}
		k, ok := series[name]
		if !ok {
			k = len(ch.Lines)
			series[name] = k
			pts := make([]Point, len(ch.Categories))
			for j := range pts {
				pts[j].Median = math.NaN()
			}
			ch.Lines = append(ch.Lines, Series{Name: name, Points: pts})
		}
		ch.Lines[k].Points[i] = p
	}
	return ch
}

// WriteSVG draws the cells' chart as SVG.
func WriteSVG(w io.Writer, cells []*Cell) error { return ChartOf(cells).WriteSVG(w) }

// WriteSVG draws the chart, 16:9 for a slide.
func (ch Chart) WriteSVG(w io.Writer) error {
	if len(ch.Categories) == 0 {
		return fmt.Errorf("nothing to plot: no run finished a round trip")
	}
	p := plot.New()
	p.Title.Text = ch.Title
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text = ch.XLabel
	p.Y.Label.Text = ch.YLabel
	p.Y.Min = 0
	p.Y.Tick.Marker = thousandsTicks{}
	p.NominalX(ch.Categories...)
	p.X.Tick.Label.Font.Size = vg.Points(9)
	width, height := 10*vg.Inch, 5.625*vg.Inch

	var whiskers struct {
		plotter.XYs
		plotter.YErrors
	}
	var labels plotter.XYLabels
	barWidth := width * 0.7 / vg.Length(len(ch.Categories)+1)
	// The axis ends a little above the tallest median, not at the slowest
	// run: one run held up on a busy machine would otherwise flatten every
	// bar. A whisker cut there says where it went.
	limit := 0.0
	for _, b := range ch.Bars {
		limit = math.Max(limit, b.Median)
	}
	for _, l := range ch.Lines {
		for _, pt := range l.Points {
			if !math.IsNaN(pt.Median) {
				limit = math.Max(limit, pt.Median)
			}
		}
	}
	limit *= whiskerRoom
	top := 0.0
	var legend [3]bool
	for i, b := range ch.Bars {
		if b.Median == 0 {
			continue
		}
		// One bar chart per bar: a bar's colour says its pinning.
		bc, err := plotter.NewBarChart(plotter.Values{b.Median}, barWidth)
		if err != nil {
			return err
		}
		bc.XMin = float64(i)
		bc.Color = BarColors[b.Pinned]
		bc.LineStyle.Width = 0
		p.Add(bc)
		if !legend[b.Pinned] {
			legend[b.Pinned] = true
			p.Legend.Add(pinningNames[b.Pinned], bc)
		}
		hi := math.Min(b.Max, limit)
		if hi > b.Min {
			whiskers.XYs = append(whiskers.XYs, plotter.XY{X: float64(i), Y: b.Median})
			whiskers.YErrors = append(whiskers.YErrors, struct{ Low, High float64 }{b.Median - b.Min, math.Max(hi-b.Median, 0)})
		}
		label := thousands(b.Median)
		if b.Max > limit {
			label = "max " + thousands(b.Max) + "\n" + label
		}
		at := math.Max(hi, b.Median)
		top = math.Max(top, at)
		labels.XYs = append(labels.XYs, plotter.XY{X: float64(i), Y: at})
		labels.Labels = append(labels.Labels, label)
	}
	for _, l := range ch.Lines {
		for _, pt := range l.Points {
			if !math.IsNaN(pt.Median) {
				top = math.Max(top, pt.Median)
			}
		}
	}
	// Room for the labels over the tallest bar, and half a bar's gap at
	// either end.
	p.Y.Max = top * 1.2
	p.X.Min, p.X.Max = -0.6, float64(len(ch.Categories))-0.4
	if len(whiskers.XYs) > 0 {
		eb, err := plotter.NewYErrorBars(whiskers)
		if err != nil {
			return err
		}
		eb.CapWidth = barWidth / 3
		p.Add(eb)
	}
	if len(labels.XYs) > 0 {
		lb, err := plotter.NewLabels(labels)
		if err != nil {
			return err
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].XAlign = -0.5 // centred over the bar
			lb.TextStyle[i].Font.Size = vg.Points(8)
			lb.TextStyle[i].Font.Variant = "Sans"
		}
		lb.Offset = vg.Point{Y: vg.Points(3)}
		p.Add(lb)
	}
	for k, s := range ch.Lines {
		var xys plotter.XYs
		for i, pt := range s.Points {
			if !math.IsNaN(pt.Median) {
				xys = append(xys, plotter.XY{X: float64(i), Y: pt.Median})
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		l.Color = lineColors[k%len(lineColors)]
		pts.Color = l.Color
		p.Add(l, pts)
		p.Legend.Add(s.Name, l, pts)
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(12)
	for _, st := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle,
		&p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle} {
		st.Font.Variant = "Sans"
	}
	wt, err := p.WriterTo(width, height, "svg")
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// thousandsTicks are the default ticks, labelled 12,000 rather than 12000.
type thousandsTicks struct{}

func (thousandsTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strings.TrimSpace(thousands(ticks[i].Value))
		}
	}
	return ticks
}
