package report

import (
	"fmt"
	"io"
	"math"
)

// WriteDiffHTML writes d as one self-contained page in the report's look.
func WriteDiffHTML(w io.Writer, d *Diff, version string) error {
	h := newHTMLWriter(w)
	loc := d.Location()
	h.page(fmt.Sprintf("Context switches: %s against %s", d.B.File, d.A.File))
	h.f("<header><h1>Context switches: B against A</h1>\n<p class=\"sub\"><strong>A</strong> <code>%s</code>: %s<br><strong>B</strong> <code>%s</code>: %s</p></header>\n",
		d.A.File, d.A.window(loc), d.B.File, d.B.window(loc))
	h.raw("<section id=\"findings\"><h2>What changed</h2>\n")
	h.raw("<p class=\"note\">Each figure is the median over the window's intervals; the bar shows the middle half of the intervals (25th to 75th percentile). " +
		"A difference is stated only where the two middle halves do not overlap; where they do, the honest answer is <em>no clear difference</em>.</p>\n")
	if f := d.Findings(); len(f) == 0 {
		h.raw("<p class=\"verdict\">No clear difference anywhere.</p>\n")
	} else {
		h.raw("<ul>\n")
		for _, s := range f {
			h.f("<li>%s</li>\n", s)
		}
		h.raw("</ul>\n")
	}
	h.raw("</section>\n")
	for _, kind := range []struct{ kind, title string }{{"host", "Host-wide"}, {"group", "Thread groups"}, {"cgroup", "Cgroups"}} {
		first := true
		for _, r := range d.Rows {
			if r.Kind != kind.kind {
				continue
			}
			if first {
				h.f("<section id=\"%s\"><h2>%s</h2>\n", kind.kind, kind.title)
				if kind.kind == "group" {
					h.raw("<p class=\"note\">A group is the threads of one program whose names differ only in digits (the monitor's <kbd>g</kbd>), matched between the two recordings by program and pattern, since PIDs differ between runs.</p>\n")
				}
				first = false
			}
			diffTable(h, r)
		}
		if !first {
			h.raw("</section>\n")
		}
	}
	if d.Omitted > 0 {
		h.f("<p class=\"note\">%d quieter groups and cgroups are not shown (<code>--top</code>).</p>\n", d.Omitted)
	}
	h.f("<footer class=\"note\"><p>Written by ctxtop %s: <code>ctxtop diff %s %s</code>.</p></footer>\n", version, d.A.File, d.B.File)
	h.end()
	return h.flush()
}

func diffTable(h *htmlWriter, r DiffRow) {
	only := ""
	switch r.Only {
	case "A":
		only = " — only in A"
	case "B":
		only = " — only in B"
	}
	h.f("<h3><span class=\"mono\">%s</span>%s</h3>\n", r.Name, only)
	h.raw("<table><thead><tr><th>figure</th><th class=\"n\">A median</th><th class=\"n\">A middle half</th><th class=\"n\">B median</th><th class=\"n\">B middle half</th><th>A and B (bars: middle halves)</th><th class=\"n\">B/A</th><th>verdict</th></tr></thead><tbody>\n")
	for _, m := range r.Metrics {
		cls, v := "", m.Verdict
		switch m.Verdict {
		case VerdictHigher:
			cls, v = "up", times(ratioAbs(m.Ratio))+" higher in B"
		case VerdictLower:
			cls, v = "down", times(ratioAbs(m.Ratio))+" lower in B"
		}
		h.f("<tr><td>%s</td><td class=\"n\">%s</td><td class=\"n\">%s–%s</td><td class=\"n\">%s</td><td class=\"n\">%s–%s</td><td>", m.Name,
			figure(m.Name, m.A.Median), figure(m.Name, m.A.Low), figure(m.Name, m.A.High),
			figure(m.Name, m.B.Median), figure(m.Name, m.B.Low), figure(m.Name, m.B.High))
		spreadBars(h, m)
		h.f("</td><td class=\"n\">%s</td><td class=\"verdict %s\">%s</td></tr>\n", times(m.Ratio), trusted(cls), v)
	}
	h.raw("</tbody></table>\n")
}

// spreadBars draws A's and B's middle halves on one scale, each median a
// tick: overlap is seen at a glance, and said in the verdict column.
func spreadBars(h *htmlWriter, m Metric) {
	if m.A.N == 0 && m.B.N == 0 {
		return
	}
	top := 0.0
	for _, s := range []Spread{m.A, m.B} {
		if s.N > 0 {
			top = max(top, s.High, s.Median)
		}
	}
	top = niceMax(top * 1.05)
	const w, pad = 200.0, 14.0
	x := func(v float64) float64 {
		if math.IsNaN(v) {
			return pad
		}
		return pad + (w-pad-4)*v/top
	}
	h.f("<svg viewBox=\"0 0 %d 30\" width=\"200\" height=\"30\" role=\"img\" aria-label=\"A %s, B %s\">", int(w), spreadText(m.Name, m.A), spreadText(m.Name, m.B))
	for i, s := range []Spread{m.A, m.B} {
		y := 3 + i*14
		h.f("<text x=\"0\" y=\"%d\" style=\"font-size:10px\">%s</text>", y+9, []string{"A", "B"}[i])
		if s.N == 0 {
			continue
		}
		fill := "#8c959f"
		if i == 1 {
			fill = "#0b5cad"
		}
		h.f("<rect x=\"%s\" y=\"%d\" width=\"%s\" height=\"10\" fill=\"%s\" fill-opacity=\"0.45\" stroke=\"%s\"/>", num(x(s.Low)), y, num(max(x(s.High)-x(s.Low), 1.5)), trusted(fill), trusted(fill))
		h.f("<line x1=\"%s\" x2=\"%s\" y1=\"%d\" y2=\"%d\" stroke=\"#1b1f23\" stroke-width=\"2\"/>", num(x(s.Median)), num(x(s.Median)), y-1, y+11)
	}
	h.raw("</svg>")
}
