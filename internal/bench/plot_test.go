package bench

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/load"
)

var svgOut = flag.String("svg", "", "also write TestWriteSVG's chart to this file, to look at")

func matrix() []*Cell {
	return []*Cell{
		cell(load.ModeSyscall, nil, 0, 1000, 1100, 900),
		cell(load.ModeSyscall, []int{0}, 0, 950, 1000, 990),
		cell(load.ModeGoroutine, nil, 0.003, 300, 310, 290),
		cell(load.ModeGoroutine, []int{0}, 0.003, 280, 320, 300),
		cell(load.ModeFutex, nil, 1.6, 24000, 22000, 26000),
		cell(load.ModeFutex, []int{0}, 2, 6000, 5800, 6400),
		cell(load.ModeFutex, []int{0, 1}, 1.5, 28000, 25000, 31000),
		cell(load.ModePipe, nil, 2, 35000, 33000, 36000),
		cell(load.ModePipe, []int{0}, 2, 8000, 7900, 8200),
		cell(load.ModePipe, []int{0, 1}, 2, 33000, 30000, 34000),
		cell(load.ModeProcess, nil, 2, 32000, 30000, 34000),
		cell(load.ModeProcess, []int{0}, 2, 13800, 13500, 14000),
		cell(load.ModeProcess, []int{0, 1}, 2, 36000, 35000, 38000),
	}
}

// svgDoc is what the test reads back: every path's style, every text and
// every font family named.
type svgDoc struct {
	paths []string
	texts []string
	fonts []string
}

func parseSVG(t *testing.T, b []byte) svgDoc {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var doc svgDoc
	var root string
	inText := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not valid XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = e.Name.Local
			}
			for _, a := range e.Attr {
				if a.Name.Local == "font-family" {
					doc.fonts = append(doc.fonts, a.Value)
				}
			}
			switch e.Name.Local {
			case "path":
				for _, a := range e.Attr {
					if a.Name.Local == "style" {
						doc.paths = append(doc.paths, a.Value)
					}
				}
			case "text":
				inText++
			}
		case xml.EndElement:
			if e.Name.Local == "text" {
				inText--
			}
		case xml.CharData:
			if inText > 0 {
				doc.texts = append(doc.texts, string(e))
			}
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	// The binary carries no fonts, so neither does the chart: a generic
	// family, drawn with whatever the viewer has.
	if diff := cmp.Diff([]string{"sans-serif"}, doc.fonts); diff != "" {
		t.Errorf("font families (-want +got):\n%s", diff)
	}
	if bytes.Contains(b, []byte("@font-face")) {
		t.Errorf("the SVG embeds a font")
	}
	return doc
}

// isBar says a path is filled with a bar colour.
func isBar(style string) bool {
	for _, c := range BarColors {
		if strings.Contains(strings.ToLower(style), fmt.Sprintf("fill:#%02x%02x%02x", c.R, c.G, c.B)) {
			return true
		}
	}
	return false
}

// TestWriteSVG: the chart is valid SVG with one bar per result and its
// axes labelled.
func TestWriteSVG(t *testing.T) {
	cells := matrix()
	var b bytes.Buffer
	if err := WriteSVG(&b, cells); err != nil {
		t.Fatal(err)
	}
	if *svgOut != "" {
		if err := os.WriteFile(*svgOut, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden(t, "matrix.svg", b.Bytes())
	doc := parseSVG(t, b.Bytes())
	bars := 0
	for _, s := range doc.paths {
		if isBar(s) {
			bars++
		}
	}
	// The legend shows a swatch of each of the three pinnings.
	if bars != len(cells)+3 {
		t.Errorf("%d bars (paths filled with a bar colour), want one per result and legend entry: %d", bars, len(cells)+3)
	}
	all := strings.Join(doc.texts, "\n")
	for _, want := range []string{"ns per round trip", "mode, pinning", "futex", "CPU 0", "CPUs 0,1", "unpinned", "24,000", "3 runs each", "one CPU", "two CPUs"} {
		if !strings.Contains(all, want) {
			t.Errorf("no text %q in the SVG; texts:\n%s", want, all)
		}
	}
}

// TestWriteSVGNothing: a bench that finished no round trip has nothing to
// draw and says so rather than writing an empty chart.
func TestWriteSVGNothing(t *testing.T) {
	var b bytes.Buffer
	err := WriteSVG(&b, []*Cell{{Experiment: Switches, Config: load.Config{Mode: load.ModeFutex}}})
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("WriteSVG of no results: %v, want a one-line error", err)
	}
}

// TestChartLines: a named series (a working-set size) is drawn as a line
// across the categories, with its name in the legend, next to the bars.
func TestChartLines(t *testing.T) {
	nan := math.NaN()
	ch := Chart{
		Title: "t", XLabel: "mode, pinning", YLabel: "ns per round trip",
		Categories: []string{"futex\nunpinned", "futex\nCPU 0"},
		Bars:       []Point{{Median: 20000, Min: 19000, Max: 21000}, {Median: 6000, Min: 5900, Max: 6100, Pinned: 1}},
		Lines: []Series{
			{Name: "64K working set", Points: []Point{{Median: 22000}, {Median: 7000}}},
			{Name: "8M working set", Points: []Point{{Median: nan}, {Median: 15000}}},
		},
	}
	var b bytes.Buffer
	if err := ch.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	if *svgOut != "" {
		if err := os.WriteFile(*svgOut, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden(t, "lines.svg", b.Bytes())
	doc := parseSVG(t, b.Bytes())
	all := strings.Join(doc.texts, "\n")
	for _, want := range []string{"64K working set", "8M working set"} {
		if !strings.Contains(all, want) {
			t.Errorf("no legend %q; texts:\n%s", want, all)
		}
	}
	c := lineColors[0].(color.RGBA)
	stroke := fmt.Sprintf("stroke:#%02x%02x%02x", c.R, c.G, c.B)
	lines := 0
	for _, s := range doc.paths {
		if strings.Contains(strings.ToLower(s), stroke) && strings.Contains(s, "fill:none") {
			lines++
		}
	}
	if lines == 0 {
		t.Errorf("no path stroked %s: the first series' line is missing", stroke)
	}
}

// TestWriteSVGClipsOutlier: one run held up for ten times the others sets
// neither the axis nor hides it: its whisker stops at the axis and its
// figure is written there.
func TestWriteSVGClipsOutlier(t *testing.T) {
	cells := []*Cell{
		cell(load.ModeFutex, nil, 2, 8000, 7200, 11700),
		cell(load.ModeFutex, []int{0}, 2, 4400, 4300, 5700),
		cell(load.ModeFutex, []int{0, 1}, 1.5, 43000, 12800, 586000),
	}
	cells = append(matrix()[:7], cells[2]) // among the rest of the matrix
	var b bytes.Buffer
	if err := WriteSVG(&b, cells); err != nil {
		t.Fatal(err)
	}
	if *svgOut != "" {
		if err := os.WriteFile(*svgOut, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	doc := parseSVG(t, b.Bytes())
	all := strings.Join(doc.texts, "\n")
	if !strings.Contains(all, "max 586,000") {
		t.Errorf("no label for the clipped run; texts:\n%s", all)
	}
	// The axis: ticks go no further than about twice the tallest median.
	for _, tx := range doc.texts {
		if tx == "500,000" || tx == "400,000" || tx == "200,000" {
			t.Errorf("axis reaches %s for medians of at most 43,000", tx)
		}
	}
}

// TestTicks: the y axis is labelled at round figures, four to seven of
// them from 0, none past the top of the axis.
func TestTicks(t *testing.T) {
	for _, tc := range []struct {
		max  float64
		want []float64
	}{
		{45600, []float64{0, 10000, 20000, 30000, 40000}},
		{103200, []float64{0, 20000, 40000, 60000, 80000, 100000}},
		{26400, []float64{0, 5000, 10000, 15000, 20000, 25000}},
		{12, []float64{0, 2, 4, 6, 8, 10, 12}}, // the top itself is a tick
	} {
		major, minor := ticks(tc.max)
		if diff := cmp.Diff(tc.want, major); diff != "" {
			t.Errorf("ticks(%v) (-want +got):\n%s", tc.max, diff)
		}
		if len(minor) < len(major)-1 {
			t.Errorf("ticks(%v): %d minor ticks for %d major, want one between each", tc.max, len(minor), len(major))
		}
	}
}
