// Package textutil holds the cell-aware layout every TUI component shares:
// padding and clipping to a width in terminal cells, wrapping, fitting a
// block into a fixed width and height, sparklines and bars. How a value
// reads (thousands separators, percentages, latencies) is package format's,
// shared with the batch reports.
package textutil

import (
	"math"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

var sparkRunes = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws the last width values on a log scale between the
// smallest and the largest non-zero value shown, right aligned, so the
// newest sample is always at the right edge. The log scale is what keeps
// minutes of history readable after one spike: a linear scale puts every
// value under a tenth of the spike on the bottom row. Zero is the bottom
// row; equal values draw at the top; NaN, an interval without a figure, is
// a blank cell.
func Sparkline(vals []float64, width int) string {
	if width <= 0 {
		return ""
	}
	if len(vals) > width {
		vals = vals[len(vals)-width:]
	}
	lo, hi := math.Inf(1), 0.0
	for _, v := range vals {
		if v > 0 {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	top := len(sparkRunes) - 1
	span := math.Log(hi) - math.Log(lo)
	var b strings.Builder
	for range width - len(vals) {
		b.WriteByte(' ')
	}
	for _, v := range vals {
		if math.IsNaN(v) {
			// No figure for that interval: a gap, not a zero.
			b.WriteByte(' ')
			continue
		}
		i := 0
		switch {
		case !(v > 0):
		case !(span > 0):
			i = top
		default:
			// Non-zero values use rows 1..top, so they never look like zero.
			i = 1 + int(math.Round((math.Log(v)-math.Log(lo))/span*float64(top-1)))
			i = min(max(i, 1), top)
		}
		b.WriteRune(sparkRunes[i])
	}
	return b.String()
}

// Bar draws a horizontal bar of v/hi over width cells with eighth-cell steps.
func Bar(v, hi float64, width int) string {
	if width <= 0 {
		return ""
	}
	if hi <= 0 || v <= 0 || math.IsNaN(v) {
		return strings.Repeat(" ", width)
	}
	eighths := int(math.Round(min(v/hi, 1) * float64(width*8)))
	full, part := eighths/8, eighths%8
	var b strings.Builder
	b.WriteString(strings.Repeat("█", full))
	n := full
	if part > 0 {
		b.WriteRune([]rune("▏▎▍▌▋▊▉")[part-1])
		n++
	}
	b.WriteString(strings.Repeat(" ", width-n))
	return b.String()
}

// Width is the printed width of s in cells, escape codes excluded.
func Width(s string) int { return ansi.StringWidth(s) }

// Truncate cuts s to at most w cells, marking the cut with an ellipsis.
func Truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// PadRight truncates or pads s to exactly w cells.
func PadRight(s string, w int) string {
	s = Truncate(s, w)
	if n := ansi.StringWidth(s); n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// PadLeft truncates or pads s on the left to exactly w cells.
func PadLeft(s string, w int) string {
	s = Truncate(s, w)
	if n := ansi.StringWidth(s); n < w {
		s = strings.Repeat(" ", w-n) + s
	}
	return s
}

// Fit clips a block to at most w cells per line and h lines, so a component
// can never push the screen past the terminal's size.
func Fit(s string, w, h int) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			lines[i] = ansi.Truncate(l, w, "")
		}
	}
	return strings.Join(lines, "\n")
}

// Wrap breaks plain text into lines of at most w cells at spaces; a word
// longer than w is cut with an ellipsis. Unlike ansi.Wrap it never breaks
// at a hyphen, which would split "--hot" or "cross-CPU".
func Wrap(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	if Width(s) <= w {
		return []string{s} // its spacing as written
	}
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		word = Truncate(word, w)
		switch {
		case line == "":
			line = word
		case Width(line)+1+Width(word) <= w:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}

// Lines is the number of lines s occupies.
func Lines(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

// JoinFitting joins as many leading parts as fit in width, so a line loses
// whole items from its end rather than being cut mid-word.
func JoinFitting(parts []string, sep string, width int) string {
	out := ""
	for i, p := range parts {
		next := p
		if i > 0 {
			next = out + sep + p
		}
		if Width(next) > width {
			break
		}
		out = next
	}
	return out
}
