package model

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Spike thresholds. vmstat's cs of hundreds to ~10,000/s is normal life;
// a jump of an order of magnitude, or more than 10,000 per CPU, is the kind
// of trouble worth a banner.
const (
	SpikeFactor     = 10
	SpikePerCPU     = 10000
	spikeMinHistory = 5
	// spikeFloor keeps a quiet box going from 30 to 400 cs/s from being
	// called a spike: ten times nothing is still nothing.
	spikeFloor = 1000
)

// SpikeDetector remembers recent cs/s to tell a spike from the usual level.
// It is the only stateful piece of the model; the caller feeds it each
// Snapshot's rate.
type SpikeDetector struct {
	window  time.Duration
	times   []time.Time
	rates   []float64
	scratch []float64
}

// NewSpikeDetector keeps the observations of the last window.
func NewSpikeDetector(window time.Duration) *SpikeDetector {
	return &SpikeDetector{window: window}
}

// Observe judges csPerSec against the history before it, then adds it.
// Spikes join the history too, so a level that lasts half the window
// becomes the new median and stops being reported: a spike is a change,
// not a state. A rate that is not a number is neither judged nor kept.
func (d *SpikeDetector) Observe(t time.Time, csPerSec float64, cpus int) Spike {
	if !(csPerSec >= 0) || math.IsInf(csPerSec, 0) {
		return Spike{}
	}
	// Drop what fell out of the window.
	k := 0
	for k < len(d.times) && t.Sub(d.times[k]) > d.window {
		k++
	}
	if k > 0 {
		d.times = append(d.times[:0], d.times[k:]...)
		d.rates = append(d.rates[:0], d.rates[k:]...)
	}
	var s Spike
	if cpus > 0 && csPerSec >= SpikePerCPU*float64(cpus) {
		s = Spike{Active: true, Reason: fmt.Sprintf("cs/s %s per CPU ≥ %s", Thousands(csPerSec/float64(cpus)), Thousands(SpikePerCPU))}
	} else if len(d.rates) >= spikeMinHistory && csPerSec >= spikeFloor {
		d.scratch = append(d.scratch[:0], d.rates...)
		slices.Sort(d.scratch)
		med := median(d.scratch)
		if med > 0 && csPerSec >= SpikeFactor*med {
			s = Spike{Active: true, Reason: fmt.Sprintf("cs/s %.0f× the %s median (%s)", csPerSec/med, windowName(d.window), Thousands(med))}
		}
	}
	d.times = append(d.times, t)
	d.rates = append(d.rates, csPerSec)
	return s
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func windowName(w time.Duration) string {
	if w%time.Minute == 0 {
		return fmt.Sprintf("%d-min", int(w/time.Minute))
	}
	return w.String()
}

// Thousands formats a rate rounded to an integer with comma separators; "-"
// for a value that is not a number. Batch text and the TUI share it.
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
