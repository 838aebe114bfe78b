package bench

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

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

// The page is in points, 10 × 5.625 inches: 16:9 for a slide. The margins
// hold the title above, the tick labels and axis labels left and below.
const (
	pageWidth, pageHeight = 720.0, 405.0
	marginLeft            = 70.0
	marginRight           = 12.0
	marginTop             = 34.0
	marginBottom          = 48.0
)

// WriteSVG draws the chart, 16:9 for a slide. It writes the SVG itself
// rather than through a plotting library: the chart is bars, whiskers,
// lines and text, and a library that measures text brings its fonts into
// the binary (megabytes). Text names a generic font family and is anchored
// at its middle or end, so no glyph widths are needed.
func (ch Chart) WriteSVG(w io.Writer) error {
	if len(ch.Categories) == 0 {
		return fmt.Errorf("nothing to plot: no run finished a round trip")
	}
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
	for _, b := range ch.Bars {
		if b.Median != 0 {
			top = math.Max(top, math.Max(math.Min(b.Max, limit), b.Median))
		}
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
	yMax := top * 1.2
	if yMax <= 0 {
		yMax = 1
	}
	xMin, xMax := -0.6, float64(len(ch.Categories))-0.4
	left, right := marginLeft, pageWidth-marginRight
	upper, lower := marginTop, pageHeight-marginBottom
	xAt := func(x float64) float64 { return left + (x-xMin)/(xMax-xMin)*(right-left) }
	yAt := func(y float64) float64 { return lower - y/yMax*(lower-upper) }
	barWidth := 0.72 * (right - left) / (xMax - xMin)

	var s svg
	fmt.Fprintf(&s, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%spt" height="%spt" viewBox="0 0 %s %s">
<g font-family="sans-serif" fill="#000000">
`, num(pageWidth), num(pageHeight), num(pageWidth), num(pageHeight))
	s.rect(0, 0, pageWidth, pageHeight, "#ffffff")
	s.text(pageWidth/2, 20, 12, "middle", ch.Title)

	// Axes, the y ticks labelled 12,000 and the categories under their bars.
	s.stroke(fmt.Sprintf("M%s,%sV%sH%s", num(left), num(upper), num(lower), num(right)), "#000000", 1)
	major, minor := ticks(yMax)
	for _, v := range minor {
		s.stroke(fmt.Sprintf("M%s,%sH%s", num(left-2.5), num(yAt(v)), num(left)), "#000000", 0.5)
	}
	for _, v := range major {
		s.stroke(fmt.Sprintf("M%s,%sH%s", num(left-5), num(yAt(v)), num(left)), "#000000", 0.5)
		s.text(left-7, yAt(v)+3.5, 10, "end", thousands(v))
	}
	for i, cat := range ch.Categories {
		x := xAt(float64(i))
		s.stroke(fmt.Sprintf("M%s,%sV%s", num(x), num(lower), num(lower+4)), "#000000", 0.5)
		for k, line := range strings.Split(cat, "\n") {
			s.text(x, lower+14+float64(k)*9, 9, "middle", line)
		}
	}
	s.text((left+right)/2, pageHeight-6, 12, "middle", ch.XLabel)
	fmt.Fprintf(&s, `<text transform="translate(16,%s) rotate(-90)" font-size="12" text-anchor="middle">`, num((upper+lower)/2))
	s.escape(ch.YLabel)
	s.WriteString("</text>\n")

	// A bar per category, its whisker over the runs and its figure on top.
	type legendEntry struct {
		name  string
		fill  string // a swatch, for a bar
		color string // a line and point, for a series
	}
	var legend []legendEntry
	var shown [3]bool
	for i, b := range ch.Bars {
		if b.Median == 0 {
			continue
		}
		x := xAt(float64(i))
		s.rect(x-barWidth/2, yAt(b.Median), barWidth, lower-yAt(b.Median), hexColor(BarColors[b.Pinned]))
		if !shown[b.Pinned] {
			shown[b.Pinned] = true
			legend = append(legend, legendEntry{name: pinningNames[b.Pinned], fill: hexColor(BarColors[b.Pinned])})
		}
		hi := math.Min(b.Max, limit)
		at := math.Max(hi, b.Median)
		if hi > b.Min {
			yLo, yHi, cap := num(yAt(b.Min)), num(yAt(at)), barWidth/6
			s.stroke(fmt.Sprintf("M%s,%sV%sM%s,%sH%sM%s,%sH%s", num(x), yLo, yHi,
				num(x-cap), yLo, num(x+cap), num(x-cap), yHi, num(x+cap)), "#000000", 1)
		}
		label := []string{thousands(b.Median)}
		if b.Max > limit {
			label = []string{"max " + thousands(b.Max), label[0]}
		}
		for k, line := range label {
			s.text(x, yAt(at)-3-float64(len(label)-1-k)*9, 8, "middle", line)
		}
	}

	// A line per series through the categories it has a figure for.
	for k, l := range ch.Lines {
		c := hexColor(lineColors[k%len(lineColors)])
		var d strings.Builder
		for i, pt := range l.Points {
			if math.IsNaN(pt.Median) {
				continue
			}
			op := "L"
			if d.Len() == 0 {
				op = "M"
			}
			fmt.Fprintf(&d, "%s%s,%s", op, num(xAt(float64(i))), num(yAt(pt.Median)))
		}
		if d.Len() == 0 {
			continue
		}
		s.stroke(d.String(), c, 1)
		for i, pt := range l.Points {
			if !math.IsNaN(pt.Median) {
				s.point(xAt(float64(i)), yAt(pt.Median), c)
			}
		}
		legend = append(legend, legendEntry{name: l.Name, color: c})
	}

	// The legend, top left inside the axes: a swatch or a line, then a name.
	for k, e := range legend {
		x, y := left+12, upper+4+float64(k)*14
		if e.fill != "" {
			s.rect(x, y, 22, 11, e.fill)
		} else {
			s.stroke(fmt.Sprintf("M%s,%sH%s", num(x), num(y+5.5), num(x+22)), e.color, 1)
			s.point(x+11, y+5.5, e.color)
		}
		s.text(x+26, y+10, 12, "start", e.name)
	}
	s.WriteString("</g>\n</svg>\n")
	_, err := w.Write(s.Bytes())
	return err
}

// svg collects the document; its elements carry their colours in a style
// attribute, which is what a test (or a reader's script) looks for.
type svg struct{ bytes.Buffer }

func (s *svg) rect(x, y, w, h float64, fill string) {
	fmt.Fprintf(s, "<path d=\"M%s,%sh%sv%sh%sZ\" style=\"fill:%s\"/>\n", num(x), num(y), num(w), num(h), num(-w), fill)
}

func (s *svg) stroke(d, color string, width float64) {
	fmt.Fprintf(s, "<path d=\"%s\" style=\"fill:none;stroke:%s;stroke-width:%s\"/>\n", d, color, num(width))
}

// point is a series' marker: a ring, as the line may pass behind a bar.
func (s *svg) point(x, y float64, color string) {
	fmt.Fprintf(s, "<circle cx=\"%s\" cy=\"%s\" r=\"2.5\" style=\"fill:none;stroke:%s;stroke-width:1\"/>\n", num(x), num(y), color)
}

func (s *svg) text(x, y, size float64, anchor, text string) {
	fmt.Fprintf(s, "<text x=\"%s\" y=\"%s\" font-size=\"%s\" text-anchor=\"%s\">", num(x), num(y), num(size), anchor)
	s.escape(text)
	s.WriteString("</text>\n")
}

func (s *svg) escape(text string) {
	// A bytes.Buffer does not fail to write.
	_ = xml.EscapeText(s, []byte(text))
}

// num is a coordinate to a hundredth of a point: finer is invisible, and a
// short fixed form keeps the file small and its bytes the same run to run.
func num(v float64) string {
	v = math.Round(v*100) / 100
	if v == 0 {
		v = 0 // not -0
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func hexColor(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

// ticks are round values from 0 to max: four to seven labelled (1, 2, 2.5
// or 5 times a power of ten apart) and an unlabelled one halfway between
// each.
func ticks(max float64) (major, minor []float64) {
	raw := max / 6
	step := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*step >= raw {
			step *= m
			break
		}
	}
	// A hair over max, so the top is a tick when it is a round figure.
	end := max * (1 + 1e-9)
	for i := 0; float64(i)*step <= end; i++ {
		major = append(major, float64(i)*step)
		if h := (float64(i) + 0.5) * step; h <= end {
			minor = append(minor, h)
		}
	}
	return major, minor
}
