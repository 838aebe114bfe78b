package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// figure is a metric's value as the comparison prints it.
func figure(name string, v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	switch name {
	case mCPU, mWait, mCross, mThrottle:
		return fmt.Sprintf("%.1f", v)
	case mLatency:
		if v < 100 {
			return fmt.Sprintf("%.1f", v)
		}
	case "run queue":
		return fmt.Sprintf("%.1f", v)
	}
	return format.Thousands(v)
}

// spreadText is "median [p25–p75]".
func spreadText(name string, s Spread) string {
	if s.N == 0 {
		return "-"
	}
	return figure(name, s.Median) + " [" + figure(name, s.Low) + "–" + figure(name, s.High) + "]"
}

// Sentence says what B did against A for one metric, in words.
func (m Metric) Sentence(row string) string {
	switch {
	case (m.Verdict == VerdictHigher || m.Verdict == VerdictLower) && (m.A.Median == 0 || m.B.Median == 0):
		return fmt.Sprintf("%s: %s went from %s to %s in B (middle halves %s–%s vs %s–%s)", row, m.Name,
			figure(m.Name, m.A.Median), figure(m.Name, m.B.Median), figure(m.Name, m.A.Low), figure(m.Name, m.A.High), figure(m.Name, m.B.Low), figure(m.Name, m.B.High))
	case m.Verdict == VerdictHigher || m.Verdict == VerdictLower:
		return fmt.Sprintf("%s: %s %s %s in B (median %s → %s; middle halves %s–%s vs %s–%s)", row, m.Name, times(ratioAbs(m.Ratio)), m.Verdict,
			figure(m.Name, m.A.Median), figure(m.Name, m.B.Median), figure(m.Name, m.A.Low), figure(m.Name, m.A.High), figure(m.Name, m.B.Low), figure(m.Name, m.B.High))
	case m.Verdict == VerdictNoDifference:
		return fmt.Sprintf("%s: %s: no clear difference (middle halves %s–%s vs %s–%s overlap)", row, m.Name,
			figure(m.Name, m.A.Low), figure(m.Name, m.A.High), figure(m.Name, m.B.Low), figure(m.Name, m.B.High))
	}
	return fmt.Sprintf("%s: %s: %s", row, m.Name, m.Verdict)
}

// ratioAbs is how many times bigger the larger side is: 0.25 reads "4.0×
// lower".
func ratioAbs(r float64) float64 {
	if r > 0 && r < 1 {
		return 1 / r
	}
	return r
}

// Findings are the sentences of the metrics that differ, the row's
// switch rates first; none means no clear difference anywhere.
func (d *Diff) Findings() []string {
	var out []string
	for _, r := range d.Rows {
		for _, m := range r.Metrics {
			if m.Verdict == VerdictHigher || m.Verdict == VerdictLower {
				out = append(out, m.Sentence(r.Kind+" "+r.Name))
			}
		}
	}
	return out
}

func (s Side) window(loc *time.Location) string {
	return fmt.Sprintf("%s, %s to %s (%d intervals)", s.Host, s.From.In(loc).Format("2006-01-02 15:04:05"), s.To.In(loc).Format("15:04:05"), s.Intervals)
}

// WriteText writes d for a terminal: the findings, then every row.
func WriteText(w io.Writer, d *Diff) error {
	b := bufio.NewWriter(w)
	loc := d.Location()
	fmt.Fprintf(b, "A  %s  %s\n", sanitize.Name(d.A.File), sanitize.Name(d.A.window(loc)))
	fmt.Fprintf(b, "B  %s  %s\n", sanitize.Name(d.B.File), sanitize.Name(d.B.window(loc)))
	fmt.Fprintln(b, "Each figure: the median over the window's intervals [the middle half of them]. A difference is stated only where the middle halves do not overlap.")
	fmt.Fprintln(b)
	if f := d.Findings(); len(f) == 0 {
		fmt.Fprintln(b, "No clear difference anywhere.")
	} else {
		fmt.Fprintln(b, "Differences (B against A):")
		for _, s := range f {
			fmt.Fprintf(b, "  %s\n", sanitize.Name(s))
		}
	}
	for _, r := range d.Rows {
		fmt.Fprintln(b)
		name := r.Kind + " " + r.Name
		if r.Kind == "host" {
			name = "host-wide"
		}
		switch r.Only {
		case "A":
			name += "  (only in A)"
		case "B":
			name += "  (only in B)"
		}
		fmt.Fprintln(b, sanitize.Name(name))
		for _, m := range r.Metrics {
			v := m.Verdict
			if v == VerdictHigher || v == VerdictLower {
				v = times(ratioAbs(m.Ratio)) + " " + v
			}
			fmt.Fprintf(b, "  %-24s A %-26s B %-26s %s\n", m.Name, spreadText(m.Name, m.A), spreadText(m.Name, m.B), v)
		}
	}
	if d.Omitted > 0 {
		fmt.Fprintf(b, "\n%d quieter groups and cgroups not shown (--top).\n", d.Omitted)
	}
	return b.Flush()
}

// WriteJSON writes d as one JSON object.
func WriteJSON(w io.Writer, d *Diff) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

// finite is v, or nil for what JSON has no number for (NaN: a figure that
// does not apply; Inf: a ratio to nothing).
func finite(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

// MarshalJSON writes figures that do not apply as null.
func (s Spread) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"median": finite(s.Median), "p25": finite(s.Low), "p75": finite(s.High), "intervals": s.N})
}

// MarshalJSON writes a ratio to nothing as null.
func (m Metric) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"name": m.Name, "a": m.A, "b": m.B, "ratio": finite(m.Ratio), "verdict": m.Verdict})
}
