// Package format turns the model's numbers into the words and figures the
// batch reports, the TUI, the HTML report and the CLI print, the same way
// everywhere: rates with thousands separators or two decimals, percentages,
// latencies, byte counts, rounding for JSON, and a column's width kept
// whatever a counter did. Laying text out in cells (padding, clipping,
// wrapping, sparklines) is the TUI's, in tui/textutil; this package only
// says how a value reads.
package format

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Thousands formats a rate rounded to an integer with comma separators; "-"
// for a value that is not a number. Every view shares it.
func Thousands(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	n := int64(math.Round(v))
	neg := n < 0
	if neg {
		n = -n
	}
	s := fmt.Sprint(n)
	out := make([]byte, 0, len(s)+len(s)/3+1)
	if neg {
		out = append(out, '-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// units are the suffixes Abbreviate tries, smallest first: past E a
// float64 rate is no longer a count of anything.
var units = [...]struct {
	div float64
	suf string
}{{1e3, "k"}, {1e6, "M"}, {1e9, "G"}, {1e12, "T"}, {1e15, "P"}, {1e18, "E"}}

// Abbreviate formats v in at most width cells with a unit (1.2k, 34M,
// 6.6T), for a number too long for its column: a column never overflows,
// whatever a counter did (an absurd per-thread counter once printed as
// 6639127543485.86 and pushed every column after it right). It takes the
// smallest unit that keeps the number under 1,000, with one decimal when
// it fits; "-" for a value that is not a number; "#"s when even that does
// not fit (a width under 4, or past 999E).
func Abbreviate(v float64, width int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	for i, u := range units {
		x := v / u.div
		if math.Abs(x) >= 999.95 && i < len(units)-1 {
			continue
		}
		for _, prec := range []int{1, 0} {
			if s := strconv.FormatFloat(x, 'f', prec, 64) + u.suf; len(s) <= width {
				return s
			}
		}
	}
	return strings.Repeat("#", max(width, 0))
}

// Rate formats a per-second rate into at most width cells: thousands
// separators when they fit, otherwise k/M/G so a narrow column never spills.
func Rate(v float64, width int) string {
	if s := Thousands(v); len(s) <= width {
		return s
	}
	return Abbreviate(v, width)
}

// Percent formats a percentage with one decimal below 100 and none above.
func Percent(v float64) string {
	if v >= 99.95 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// PercentIn is Percent in at most width cells: a percentage past any
// sense (a counter that jumped) is abbreviated like a rate rather than
// pushing the columns after it.
func PercentIn(v float64, width int) string {
	if s := Percent(v); len(s) <= width {
		return s
	}
	return Abbreviate(v, width)
}

// Micros formats a latency in microseconds: one decimal below 100, then
// whole numbers with thousands separators.
func Micros(v float64) string {
	if v < 100 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return Thousands(v)
}

// Decimal formats a rate like pidstat, two decimals and no separators, so
// the columns paste into a spreadsheet; "-" for a value that is not a
// number.
func Decimal(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// DecimalIn is Decimal when it fits in width cells, else the figure
// abbreviated (6.6T): a column never overflows and pushes the ones after
// it, whatever a counter did.
func DecimalIn(v float64, width int) string {
	if s := Decimal(v); len(s) <= width {
		return s
	}
	return Abbreviate(v, width)
}

// Round rounds to places decimals; JSON has no NaN, so a value that is not
// a number (the model produces none) is written as 0 rather than failing
// the whole report.
func Round(v float64, places int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// Bytes formats a byte count in the largest binary unit it reaches, with
// one decimal: "512 B", "1.5 KiB", "20.0 MiB".
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
