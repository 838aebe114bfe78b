package format

import (
	"fmt"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
)

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
