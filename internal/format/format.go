// Package format turns the model's numbers into the words and figures the
// batch reports, the TUI and the CLI print, the same way everywhere.
package format

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
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

// SpikeReason says why a snapshot is a spike, against what baseline: ""
// when it is not one.
func SpikeReason(s model.Spike) string {
	if !s.Active {
		return ""
	}
	if s.Factor <= 0 {
		return fmt.Sprintf("up from the %s baseline 0 (median)", windowName(s.Window))
	}
	// 3.1× tells a small jump from a big one; 2294.0× is noise.
	times := fmt.Sprintf("%.1f", s.Factor)
	if s.Factor >= 10 {
		times = Thousands(s.Factor)
	}
	return fmt.Sprintf("%s× the %s baseline %s (median)", times, windowName(s.Window), Thousands(s.Baseline))
}

func windowName(w time.Duration) string {
	if w > 0 && w%time.Minute == 0 {
		return fmt.Sprintf("%d-min", int(w/time.Minute))
	}
	return w.String()
}
