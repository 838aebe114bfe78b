// Package format turns the model's numbers into the words and figures the
// batch reports, the TUI and the CLI print, the same way everywhere.
package format

import (
	"fmt"
	"math"
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
