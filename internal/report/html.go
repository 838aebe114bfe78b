package report

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ctxtop/ctxtop/internal/format"
)

// page opens a page: head, styles, the title.
func (h *htmlWriter) page(title string) {
	h.raw("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n")
	// No request may leave the file: nothing loads from anywhere, and
	// the policy says so to the browser too.
	h.raw("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n")
	h.f("<title>%s</title>\n<style>%s</style></head>\n<body>\n", title, trusted(pageCSS))
}

// end closes a page with its script.
func (h *htmlWriter) end() {
	h.f("<div id=\"tip\" role=\"tooltip\"></div>\n<script>%s</script>\n</body></html>\n", trusted(pageJS))
}

// WriteHTML writes r as one self-contained page.
func WriteHTML(w io.Writer, r *Report) error {
	h := newHTMLWriter(w)
	loc := r.Location()
	clock := func(t time.Time) string { return t.In(loc).Format("15:04:05") }
	day := r.From.In(loc).Format("2006-01-02")
	zone := r.From.In(loc).Format("MST")

	h.page(fmt.Sprintf("Context switches on %s, %s %s–%s", r.Facts.Hostname, day, clock(r.From), clock(r.To)))
	h.f("<header><h1>Context switches on %s</h1>\n", r.Facts.Hostname)
	h.f("<p class=\"sub\">%s, %s to %s %s (%s, %d intervals of %s), from the recording <code>%s</code></p></header>\n",
		day, clock(r.From), clock(r.To), zone, dur(r.To.Sub(r.From)), r.Intervals, dur(r.Recorder.Interval), r.File)
	h.raw("<nav aria-label=\"sections\"><a href=\"#summary\">Summary</a><a href=\"#timelines\">Timelines</a><a href=\"#spikes\">Spikes</a>" +
		"<a href=\"#hot\">Hot groups and threads</a><a href=\"#cgroups\">Cgroups</a><a href=\"#wakeups\">Wake-ups</a><a href=\"#stacks\">Stacks</a><a href=\"#host\">Host and recording</a></nav>\n")

	writeSummary(h, r, clock)
	writeTimelines(h, r, clock)
	writeSpikes(h, r, clock)
	writeHot(h, r)
	writeCgroups(h, r)
	writePairs(h, r)
	writeStacks(h, r)
	writeHost(h, r, clock)
	h.f("<footer class=\"note\"><p>Written by ctxtop %s on %s. Every figure is what <code>ctxtop replay %s</code> shows for the same window.</p></footer>\n",
		r.Version, r.Generated.In(loc).Format("2006-01-02 15:04 MST"), r.File)
	h.end()
	return h.flush()
}

func writeSummary(h *htmlWriter, r *Report, clock func(time.Time) string) {
	h.raw("<section id=\"summary\"><h2>Summary</h2>\n")
	h.f("<p>The host's usual level was <strong>%s context switches a second</strong> (the median of the intervals outside spikes); the mean over the window was %s/s and the highest interval %s/s.</p>\n",
		rate(r.Baseline), rate(r.MeanCS), rate(r.PeakCS))
	if len(r.Spikes) == 0 {
		h.raw("<p><strong>No spike.</strong> Switches never rose well above their recent level: the spike rule needs at least twice the 5-minute median, three deviations above it, and 5,000/s per CPU.</p>\n")
	} else {
		h.f("<p><strong>%d spike%s</strong> (runs of intervals well above the recent level), the largest first:</p>\n<ul>\n", len(r.Spikes), plural(len(r.Spikes)))
		for i, s := range r.Spikes {
			if i == 5 {
				break
			}
			h.f("<li><a href=\"#spike-%d\"><strong>%s–%s</strong></a> (%s): cs/s peaked at <strong>%s</strong> at %s, %s.", i+1, clock(s.Start), clock(s.End),
				dur(s.Duration), rate(s.Peak), clock(s.PeakAt), s.Reason)
			writeRises(h, s)
			if len(s.Threads) > 0 {
				t := s.Threads[0]
				h.f(" Busiest thread: <strong>%s</strong> (PID %d, TID %d, of %s), %s switches/s during the spike", t.Comm, t.PID, t.TID, t.ProcessComm, rate(t.Total()))
				if t.Why != "" {
					h.f(", %s", t.Why)
				}
				h.raw(".")
			}
			h.raw("</li>\n")
		}
		h.raw("</ul>\n")
	}
	if len(r.Groups) > 0 && r.Groups[0].Total() > 0 {
		h.raw("<p>Over the whole window the busiest thread groups were ")
		for i, g := range r.Groups[:min(3, len(r.Groups))] {
			if i > 0 {
				h.raw(", ")
			}
			h.f("<strong>%s</strong> (%s/s, %s CPU)", g.Name, rate(g.Total()), pct(g.CPU))
		}
		h.raw(".</p>\n")
	}
	if th := throttled(r.Cgroups); len(th) > 0 {
		h.raw("<p>Throttled by their CPU limit: ")
		for i, c := range th[:min(3, len(th))] {
			if i > 0 {
				h.raw(", ")
			}
			h.f("<strong>%s</strong> (%s of periods on average, up to %s)", c.Name, pct(c.Throttled), pct(c.PeakThrottl))
		}
		h.raw(".</p>\n")
	}
	for _, n := range r.Notes {
		h.f("<p class=\"note\">Note: %s</p>\n", n)
	}
	h.raw("</section>\n")
}

// writeRises says which groups and cgroups rose during a spike.
func writeRises(h *htmlWriter, s Spike) {
	var g, c []Rise
	for _, x := range s.Rises {
		if x.Kind == "group" {
			g = append(g, x)
		} else {
			c = append(c, x)
		}
	}
	if len(g) == 0 && len(c) == 0 {
		h.raw(" No thread group's switches rose: the rise is in threads that started or exited within an interval, or in the idle task.")
		return
	}
	h.raw(" Rose most: ")
	for i, x := range g[:min(2, len(g))] {
		if i > 0 {
			h.raw("; ")
		}
		h.f("group <strong>%s</strong> %s → %s/s", x.Name, rate(x.Before), rate(x.During))
		if x.Before > 0 {
			h.f(" (%s)", times(x.Factor()))
		}
	}
	if len(c) > 0 {
		if len(g) > 0 {
			h.raw("; ")
		}
		h.f("cgroup <strong>%s</strong> %s → %s/s", c[0].Name, rate(c[0].Before), rate(c[0].During))
	}
	h.raw(".")
	if s.Explained > 0 {
		h.f(" The groups listed hold %s of the host's rise.", pct(100*s.Explained))
	}
}

func throttled(cs []CgroupRow) []CgroupRow {
	var out []CgroupRow
	for _, c := range cs {
		if c.Throttling && c.Throttled > 0 {
			out = append(out, c)
		}
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// chart geometry, in the outer SVG's units.
const (
	chartW     = 1200
	plotX      = 78
	plotW      = chartW - plotX - 12
	plotTop    = 8
	axisLabels = 6
)

// niceMax rounds v up to 1, 2 or 5 times a power of ten.
func niceMax(v float64) float64 {
	if !(v > 0) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// num is a figure for a polyline: four significant digits are a pixel.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

type chartLine struct {
	class string
	vals  []float64
}

// chart draws one timeline: the lines in a plot whose viewBox is in
// (point, value) units, so zooming is a change of viewBox; spikes hatched
// and labelled; the axes in the outer SVG.
func chart(h *htmlWriter, tl *Timeline, id, title, desc string, height int, lines []chartLine, clock func(time.Time) string) {
	n := len(tl.Times)
	top := 0.0
	for _, l := range lines {
		for _, v := range l.vals {
			if !math.IsNaN(v) {
				top = max(top, v)
			}
		}
	}
	ymax := niceMax(top * 1.05)
	ph := height - plotTop - 22
	h.f("<figure><svg class=\"chart\" id=\"%s\" viewBox=\"0 0 %d %d\" role=\"img\" aria-labelledby=\"%s-t %s-d\">", id, chartW, height, id, id)
	h.f("<title id=\"%s-t\">%s</title><desc id=\"%s-d\">%s</desc>\n", id, title, id, desc)
	for i := 0; i <= 2; i++ {
		y := plotTop + ph - ph*i/2
		h.f("<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n",
			plotX, y, plotX+plotW, y, plotX-6, y+4, rate(ymax*float64(i)/2))
	}
	for i := range axisLabels {
		k := min(n-1, i*n/(axisLabels-1))
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case axisLabels - 1:
			anchor = "end"
		}
		h.f("<text class=\"tx\" x=\"%d\" y=\"%d\" text-anchor=\"%s\">%s</text>", plotX+plotW*i/(axisLabels-1), height-5, anchor, clock(tl.Times[k]))
	}
	h.f("\n<svg class=\"plot\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %s\" preserveAspectRatio=\"none\">\n", plotX, plotTop, plotW, ph, n, num(ymax))
	for i := 0; i < n; {
		if !tl.Spike[i] {
			i++
			continue
		}
		j := i
		for j < n && tl.Spike[j] {
			j++
		}
		h.f("<rect class=\"spikebar\" x=\"%d\" y=\"0\" width=\"%d\" height=\"%s\"><title>spike %s–%s</title></rect>\n", i, j-i, num(ymax), clock(tl.Times[i]), clock(tl.Times[j-1]))
		i = j
	}
	h.f("<rect class=\"sel\" x=\"0\" y=\"0\" width=\"0\" height=\"%s\"/>\n", num(ymax))
	for _, l := range lines {
		// The baseline is drawn only where the spike rule had one: a line
		// at 0 before it has history would say the usual level was 0.
		open := false
		for i, v := range l.vals {
			if math.IsNaN(v) || (l.class == "baseline" && v <= 0) {
				if open {
					h.raw("\"/>\n")
					open = false
				}
				continue
			}
			if !open {
				h.f("<polyline class=\"%s\" vector-effect=\"non-scaling-stroke\" points=\"", l.class)
				open = true
			} else {
				h.raw(" ")
			}
			h.raw(strconv.Itoa(i) + ".5," + num(ymax-v))
		}
		if open {
			h.raw("\"/>\n")
		}
	}
	h.raw("</svg>\n")
	// The spike label sits in the outer SVG, where text keeps its shape.
	for i := 0; i < n; {
		if !tl.Spike[i] {
			i++
			continue
		}
		j := i
		for j < n && tl.Spike[j] {
			j++
		}
		h.f("<text class=\"spikelabel\" data-i=\"%d\" x=\"%d\" y=\"%d\">▼ spike</text>\n", i, plotX+plotW*i/n+2, plotTop+12)
		i = j
	}
	h.raw("</svg>")
}

func writeTimelines(h *htmlWriter, r *Report, clock func(time.Time) string) {
	tl := &r.Timeline
	h.raw("<section id=\"timelines\"><h2>Timelines</h2>\n")
	per := ""
	if tl.PerPoint > 1 {
		per = fmt.Sprintf(" Each point is the highest of %d intervals, so a short burst still shows.", tl.PerPoint)
	}
	h.f("<p class=\"note\">Spikes are shaded and labelled; the dashed line is the baseline the spike rule judged each interval against (the median of the 5 minutes before it).%s"+
		"<span class=\"js-only\"> Hover for values; drag across a chart to zoom, double-click to zoom out.</span> "+
		"<button type=\"button\" id=\"unzoom\" class=\"js-only\" style=\"display:none\">Show the whole window</button></p>\n", per)

	desc := fmt.Sprintf("Context switches per second from %s to %s: usual level %s, highest %s.", clock(r.From), clock(r.To), rate(r.Baseline), rate(r.PeakCS))
	for _, s := range r.Spikes {
		desc += fmt.Sprintf(" Spike %s–%s peaking at %s.", clock(s.Start), clock(s.End), rate(s.Peak))
	}
	chart(h, tl, "tl-cs", "Context switches per second, host-wide", desc, 190,
		[]chartLine{{"baseline", tl.Baseline}, {"series", tl.CS}}, clock)
	h.raw("<figcaption>")
	h.text(desc)
	h.raw("</figcaption></figure>\n")

	if len(tl.Groups) > 0 {
		var lines []chartLine
		for i, g := range tl.Groups {
			lines = append(lines, chartLine{"gl g" + strconv.Itoa(i), g.Values})
		}
		gdesc := "Switches per second of the busiest thread groups:"
		for _, g := range tl.Groups {
			gdesc += fmt.Sprintf(" %s highest %s;", g.Name, rate(maxOf(g.Values)))
		}
		chart(h, tl, "tl-groups", "Context switches per second of the busiest thread groups", gdesc, 190, lines, clock)
		h.raw("<ul class=\"legend\" aria-hidden=\"true\">")
		for i, g := range tl.Groups {
			h.f("<li><svg viewBox=\"0 0 34 10\"><line class=\"gl g%d\" x1=\"0\" y1=\"5\" x2=\"34\" y2=\"5\" stroke-width=\"2\"/></svg> %s</li>", i, g.Name)
		}
		h.raw("</ul><figcaption>")
		h.text(gdesc)
		h.raw("</figcaption></figure>\n")
	}
	for _, c := range []struct {
		id, title string
		vals      []float64
		what      string
	}{
		{"tl-in", "Interrupts per second", tl.In, "interrupts/s"},
		{"tl-ipi", "Rescheduling IPIs per second (one CPU asking another to switch)", tl.IPI, "IPIs/s"},
		{"tl-runq", "Run queue: threads runnable or running (procs_running)", tl.RunQ, "runnable threads"},
	} {
		d := fmt.Sprintf("%s from %s to %s: median %s, highest %s.", c.title, clock(r.From), clock(r.To), rate(medianOf(c.vals)), rate(maxOf(c.vals)))
		chart(h, tl, c.id, c.title, d, 120, []chartLine{{"series", c.vals}}, clock)
		h.raw("<figcaption>")
		h.text(d)
		h.raw("</figcaption></figure>\n")
	}
	// The values behind the hover, in the page: nothing is fetched.
	type g struct {
		N string    `json:"n"`
		V []float64 `json:"v"`
	}
	data := struct {
		T     []int64              `json:"t"`
		Off   int                  `json:"off"`
		Per   int                  `json:"per"`
		S     map[string][]float64 `json:"s"`
		G     []g                  `json:"g"`
		Spike []bool               `json:"spike"`
	}{Per: tl.PerPoint, Spike: tl.Spike, S: map[string][]float64{"cs/s": round(tl.CS), "baseline": round(tl.Baseline),
		"interrupts/s": round(tl.In), "IPIs/s": round(tl.IPI), "run queue": tl.RunQ}}
	_, data.Off = r.From.In(r.Location()).Zone()
	for _, t := range tl.Times {
		data.T = append(data.T, t.UnixMilli())
	}
	for _, l := range tl.Groups {
		data.G = append(data.G, g{l.Name, round(l.Values)})
	}
	b, err := json.Marshal(data)
	if err != nil {
		h.err = err
	}
	// json.Marshal escapes <, > and &, so no name can close the script.
	h.f("<script id=\"tl-data\" type=\"application/json\">%s</script>\n</section>\n", trusted(b))
}

func round(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			x = 0
		}
		out[i] = math.Round(x)
	}
	return out
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		if !math.IsNaN(x) {
			m = max(m, x)
		}
	}
	return m
}

func writeSpikes(h *htmlWriter, r *Report, clock func(time.Time) string) {
	h.raw("<section id=\"spikes\"><h2>Spikes</h2>\n")
	if len(r.Spikes) == 0 {
		h.raw("<p>None in this window.</p></section>\n")
		return
	}
	for i, s := range r.Spikes {
		h.f("<div class=\"spikebox\" id=\"spike-%d\"><h3>Spike %d: %s–%s (%s, %d interval%s)", i+1, i+1, clock(s.Start), clock(s.End), dur(s.Duration), s.Intervals, plural(s.Intervals))
		per := r.Timeline.PerPoint
		h.f(" <button type=\"button\" class=\"js-only\" onclick=\"ctxtopZoom(%d,%d)\">zoom the timelines here</button></h3>\n", s.firstIdx/per, s.lastIdx/per+1)
		h.f("<p>cs/s peaked at <strong>%s</strong> at %s: %s.", rate(s.Peak), clock(s.PeakAt), s.Reason)
		writeRises(h, s)
		h.raw("</p>\n")
		if len(s.Rises) > 0 {
			h.raw("<table><caption class=\"sub\">What rose, against the intervals before the spike</caption><thead><tr><th>kind</th><th>name</th><th class=\"n\">cs/s before</th><th class=\"n\">cs/s during</th><th class=\"n\">factor</th></tr></thead><tbody>\n")
			for _, x := range s.Rises {
				h.f("<tr><td>%s</td><td>%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td></tr>\n", x.Kind, x.Name, rate(x.Before), rate(x.During), riseFactor(x))
			}
			h.raw("</tbody></table>\n")
		}
		threadTable(h, s.Threads, "The busiest threads during the spike")
		h.raw("</div>\n")
	}
	h.raw("</section>\n")
}

func threadTable(h *htmlWriter, rows []ThreadRow, caption string) {
	if len(rows) == 0 {
		return
	}
	h.f("<table><caption class=\"sub\">%s</caption><thead><tr><th>thread</th><th class=\"n\">PID</th><th class=\"n\">TID</th><th>process</th>"+
		"<th class=\"n\">cs/s</th><th class=\"n\">voluntary</th><th class=\"n\">involuntary</th><th class=\"n\">CPU</th><th class=\"n\">WAIT</th><th class=\"n\">hot</th><th>WHY</th></tr></thead><tbody>\n", caption)
	for _, t := range rows {
		h.f("<tr><td class=\"mono\">%s</td><td class=\"n\">%d</td><td class=\"n\">%d</td><td class=\"mono\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td>%s</td></tr>\n",
			t.Comm, t.PID, t.TID, t.ProcessComm, rate(t.Total()), rate(t.Voluntary), rate(t.Involuntary), pct(t.CPU), pct(t.Wait), pct(100*t.HotShare), t.Why)
	}
	h.raw("</tbody></table>\n")
}

func writeHot(h *htmlWriter, r *Report) {
	h.raw("<section id=\"hot\"><h2>Hot groups and threads, over the whole window</h2>\n")
	h.f("<p class=\"note\">Means over the window. A group is a pool: the threads of one process whose names differ only in digits (the monitor's <kbd>g</kbd>). "+
		"<em>hot</em> is the share of the window a thread switched at %s/s or more; WHY is the reason the model gave for most of that time: "+
		"<em>blocking</em> (voluntary switches: it waits, on what) or <em>preempted</em> (involuntary: its time slice ran out, too many runnable threads).</p>\n", rate(r.Recorder.Hot))
	if len(r.Groups) > 0 {
		h.raw("<table><caption class=\"sub\">Thread groups</caption><thead><tr><th>group</th><th class=\"n\">threads</th><th class=\"n\">cs/s</th><th class=\"n\">voluntary</th><th class=\"n\">involuntary</th><th class=\"n\">highest cs/s</th><th class=\"n\">CPU</th><th class=\"n\">WAIT</th><th>WHY</th></tr></thead><tbody>\n")
		for _, g := range r.Groups {
			h.f("<tr><td class=\"mono\">%s</td><td class=\"n\">%d</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td>%s</td></tr>\n",
				g.Name, g.Threads, rate(g.Total()), rate(g.Voluntary), rate(g.Involuntary), rate(g.Peak), pct(g.CPU), pct(g.Wait), g.Why)
		}
		h.raw("</tbody></table>\n")
	}
	threadTable(h, r.Threads, "Threads")
	h.raw("</section>\n")
}

func writeCgroups(h *htmlWriter, r *Report) {
	h.raw("<section id=\"cgroups\"><h2>Cgroups</h2>\n")
	if len(r.Cgroups) == 0 {
		h.raw("<p>The recording holds no cgroups (a copied procfs, or a kernel without them).</p></section>\n")
		return
	}
	h.raw("<p class=\"note\">Throttled: the share of CPU periods in which the group used up its quota and had to wait, the waits a CPU limit adds.</p>\n")
	h.raw("<table><thead><tr><th>cgroup</th><th class=\"n\">threads</th><th class=\"n\">cs/s</th><th class=\"n\">CPU</th><th class=\"n\">limit</th><th class=\"n\">throttled</th><th class=\"n\">worst interval</th><th class=\"n\">throttled ms/s</th><th>WHY</th></tr></thead><tbody>\n")
	for _, c := range r.Cgroups {
		limit, th, peak, ms := "none", "-", "-", "-"
		if c.LimitCPUs > 0 {
			limit = strconv.FormatFloat(c.LimitCPUs, 'f', -1, 64) + " CPUs"
		}
		if c.Throttling {
			th, peak, ms = pct(c.Throttled), pct(c.PeakThrottl), strconv.FormatFloat(c.ThrottledMs, 'f', 1, 64)
		}
		h.f("<tr><td class=\"mono\" title=\"%s\">%s</td><td class=\"n\">%d</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td>%s</td></tr>\n",
			c.Path, c.Name, c.Threads, rate(c.Total()), pct(c.CPU), limit, th, peak, ms, c.Why)
	}
	h.raw("</tbody></table></section>\n")
}

func writePairs(h *htmlWriter, r *Report) {
	h.raw("<section id=\"wakeups\"><h2>Who wakes whom</h2>\n")
	if !r.HasWakeups {
		h.raw("<p>Not recorded: <code>ctxtop record --wakeups</code> records who wakes whom (eBPF, root).</p></section>\n")
		return
	}
	h.raw("<p class=\"note\">Cross-CPU: the share of wake-ups after which the woken thread ran on another CPU than its waker's (an IPI, a cold cache). Latency: from being woken to running; p50 over the window, p99 of the worst interval.</p>\n")
	h.raw("<table><thead><tr><th>waker</th><th class=\"n\">TID</th><th>→ woken</th><th class=\"n\">TID</th><th class=\"n\">wake-ups/s</th><th class=\"n\">cross-CPU</th><th class=\"n\">latency p50</th><th class=\"n\">p99 (worst)</th></tr></thead><tbody>\n")
	for _, p := range r.Pairs {
		tid := strconv.Itoa(p.WakerTID)
		if p.WakerTID < 0 {
			tid = "-"
		}
		h.f("<tr><td class=\"mono\">%s</td><td class=\"n\">%s</td><td class=\"mono\">%s</td><td class=\"n\">%d</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td></tr>\n",
			p.Waker, tid, p.Wakee, p.WakeeTID, rate(p.PerSec), pct(p.CrossCPU), micros(p.P50), micros(p.P99Max))
	}
	h.raw("</tbody></table></section>\n")
}

func writeStacks(h *htmlWriter, r *Report) {
	h.raw("<section id=\"stacks\"><h2>Where threads blocked, and who woke them</h2>\n")
	if !r.HasStacks {
		h.raw("<p>Not recorded: <code>ctxtop record --stacks</code> records where hot threads block and are woken from (eBPF, root).</p></section>\n")
		return
	}
	h.raw("<p class=\"note\">Flame graphs of the sampled switches over the window, the thread at the top, then its frames outward in; a frame's width is its share. " +
		"<em>Blocked at</em>: where threads went off CPU. <em>Woken from</em>: where their wakers were. Hover a frame for its count. Frames narrower than 0.2% are left out.</p>\n<div class=\"tabset\">\n")
	for _, f := range []struct {
		tab string
		n   *flameNode
	}{{"Blocked at (off-CPU)", r.OffCPU}, {"Woken from", r.WokenFrom}} {
		h.f("<div class=\"tabpanel\" data-tab=\"%s\"><h3>%s</h3>\n", f.tab, f.tab)
		flame(h, f.n, f.tab)
		h.raw("</div>\n")
	}
	h.raw("</div></section>\n")
}

const flameRow = 17

// flame draws n as an icicle: the root across the top, each frame under
// its caller, as wide as its share.
func flame(h *htmlWriter, n *flameNode, title string) {
	if n == nil || n.Count == 0 {
		h.raw("<p>No stacks of this kind in the window.</p>\n")
		return
	}
	depth := 0
	var measure func(*flameNode, int)
	measure = func(x *flameNode, d int) {
		depth = max(depth, d)
		for _, k := range x.Kids {
			measure(k, d+1)
		}
	}
	measure(n, 1)
	height := depth * flameRow
	h.f("<svg class=\"flame\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s flame graph, %s sampled events\">\n", chartW, height, title, format.Thousands(float64(n.Count)))
	var draw func(x *flameNode, left float64, d int)
	draw = func(x *flameNode, left float64, d int) {
		w := float64(chartW) * float64(x.Count) / float64(n.Count)
		share := 100 * float64(x.Count) / float64(n.Count)
		label := x.Name
		if d == 0 {
			label = "all " + title
		}
		h.f("<g><title>%s: %s (%s)</title><rect x=\"%s\" y=\"%d\" width=\"%s\" height=\"%d\" fill=\"%s\"/>", label, format.Thousands(float64(x.Count)), pct(share),
			num(left), d*flameRow, num(w), flameRow-1, trusted(flameColour(x.Name, d)))
		if chars := int((w - 6) / 6.6); chars >= 3 {
			h.f("<text x=\"%s\" y=\"%d\">%s</text>", num(left+3), d*flameRow+12, clip(label, chars))
		}
		h.raw("</g>\n")
		for _, k := range x.Kids {
			draw(k, left, d+1)
			left += float64(chartW) * float64(k.Count) / float64(n.Count)
		}
	}
	draw(n, 0, 0)
	h.raw("</svg>\n")
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// flameColour is a warm colour from the frame's name, so one function
// keeps its colour across the graph; the first two rows (thread, kind)
// are grey. Colour carries nothing the text does not.
func flameColour(name string, depth int) string {
	if depth <= 2 {
		return "#d0d7de"
	}
	f := fnv.New32a()
	f.Write([]byte(name))
	v := f.Sum32()
	if strings.HasPrefix(name, "[") {
		return "#e1e4e8"
	}
	return fmt.Sprintf("rgb(%d,%d,%d)", 225+v%30, 110+(v>>8)%100, 40+(v>>16)%50)
}

func writeHost(h *htmlWriter, r *Report, clock func(time.Time) string) {
	f, rc := r.Facts, r.Recorder
	h.raw("<section id=\"host\"><h2>Host and recording</h2><dl class=\"facts\">\n")
	item := func(k, v string) { h.f("<dt>%s</dt><dd>%s</dd>\n", k, v) }
	item("host", f.Hostname)
	item("kernel", f.Kernel)
	cpu := fmt.Sprintf("%d logical CPUs", max(f.CPUs, rc.CPUs))
	if f.CPUModel != "" {
		cpu += ", " + f.CPUModel
	}
	item("CPUs", cpu)
	if f.MemTotal > 0 {
		item("memory", fmt.Sprintf("%.1f GiB", float64(f.MemTotal)/(1<<30)))
	}
	if !f.BootTime.IsZero() {
		item("booted", f.BootTime.In(r.Location()).Format("2006-01-02 15:04 MST"))
	}
	loc := r.Location()
	item("recorded", fmt.Sprintf("%s to %s (%s), every %s, %d samples", rc.Start.In(loc).Format("2006-01-02 15:04:05 MST"), clock(rc.End), dur(rc.End.Sub(rc.Start)), dur(rc.Interval), rc.Samples))
	item("this report", fmt.Sprintf("%s to %s, %d intervals", clock(r.From), clock(r.To), r.Intervals))
	who := "every process"
	if len(rc.PIDs) > 0 {
		who = fmt.Sprintf("processes %v only", rc.PIDs)
	}
	item("recorded by", fmt.Sprintf("ctxtop %s, %s, procfs %s, hot at %s switches/s", rc.Version, who, rc.ProcRoot, rate(rc.Hot)))
	extra := []string{}
	if r.HasWakeups {
		extra = append(extra, "who wakes whom (--wakeups)")
	}
	if r.HasStacks {
		extra = append(extra, "stacks (--stacks)")
	}
	if len(extra) == 0 {
		extra = append(extra, "none (no --wakeups, no --stacks)")
	}
	item("tracers", strings.Join(extra, ", "))
	item("file", fmt.Sprintf("%s, %s bytes", r.File, format.Thousands(float64(rc.Size))))
	if rc.Lost > 0 {
		item("damage", fmt.Sprintf("%d samples lost", rc.Lost))
	}
	h.raw("</dl></section>\n")
}

// riseFactor is a rise's factor, "new" from nothing.
func riseFactor(r Rise) string {
	if r.Before <= 0 {
		return "new"
	}
	return times(r.Factor())
}
