package model

import (
	"math"
	"slices"
	"time"
)

// The spike rule, in one place. A spike is a departure from the host's own
// recent level, not a level: a host that has switched 60,000 times a second
// per CPU for minutes is busy, and marking every sample of it hides the
// burst that matters. A rate is a spike when all of these hold:
//
//   - there is a baseline: at least spikeMinHistory earlier rates within
//     the window. Until then nothing is a spike: a first sample's level
//     says nothing about change, and a rule of level alone would light the
//     first seconds of every busy recording and then go dark with no change
//     in load;
//   - it is at least spikeMinJump times the baseline, the median of those
//     rates, so a very steady series (spread ≈ 0) does not flag wiggles;
//   - it is at least spikeMADs scaled MADs above the baseline (the Hampel
//     identifier, MATLAB's isoutlier default): the median absolute
//     deviation times 1.4826 estimates the standard deviation of normal
//     noise without letting the outliers it looks for inflate it, so a
//     host whose rate swings widely needs a larger jump;
//   - it is at least spikeFloorPerCPU per CPU: vmstat's hundreds to ~10,000
//     switches a second are normal life on a 2-core box, so below 5,000 a
//     CPU a host is quiet whatever its history (30 → 400 is not a storm).
//
// Every rate joins the window, spikes too. A burst shorter than half the
// window cannot move a median, so a 5 s burst stays a spike for all its
// 5 s; a new level that lasts more than half the window becomes the
// baseline and stops being reported, because a spike is a change, not a
// state. Keeping spikes out would mark a lasting new level forever.
const (
	spikeMinHistory  = 10
	spikeMinJump     = 2.0
	spikeMADs        = 3.0
	spikeFloorPerCPU = 5000
	// madToSigma makes a MAD a standard deviation for normal noise.
	madToSigma = 1.4826
)

// SpikeDetector remembers recent cs/s to tell a spike from the usual level.
// It is the only stateful piece of the model; the caller feeds it each
// Snapshot's rate, live and in replay alike.
type SpikeDetector struct {
	window time.Duration
	// times and rates are the window in arrival order, sorted the same
	// rates ascending: the median is then an index and the MAD a walk
	// outward from it, with no sort and no allocation per observation.
	times  []time.Time
	rates  []float64
	sorted []float64
}

// NewSpikeDetector keeps the observations of the last window.
func NewSpikeDetector(window time.Duration) *SpikeDetector {
	return &SpikeDetector{window: window}
}

// Observe judges csPerSec, measured at t on a host of cpus CPUs, against
// the window before it, then adds it to the window. A rate that is not a
// number is neither judged nor kept.
func (d *SpikeDetector) Observe(t time.Time, csPerSec float64, cpus int) Spike {
	if !(csPerSec >= 0) || math.IsInf(csPerSec, 0) {
		return Spike{}
	}
	d.evict(t)
	s := d.judge(csPerSec, cpus)
	d.times = append(d.times, t)
	d.rates = append(d.rates, csPerSec)
	i, _ := slices.BinarySearch(d.sorted, csPerSec)
	d.sorted = slices.Insert(d.sorted, i, csPerSec)
	return s
}

// evict drops the observations older than the window before t.
func (d *SpikeDetector) evict(t time.Time) {
	k := 0
	for k < len(d.times) && t.Sub(d.times[k]) > d.window {
		i, _ := slices.BinarySearch(d.sorted, d.rates[k])
		d.sorted = slices.Delete(d.sorted, i, i+1)
		k++
	}
	if k > 0 {
		d.times = append(d.times[:0], d.times[k:]...)
		d.rates = append(d.rates[:0], d.rates[k:]...)
	}
}

func (d *SpikeDetector) judge(cs float64, cpus int) Spike {
	if len(d.sorted) < spikeMinHistory {
		return Spike{}
	}
	base := median(d.sorted)
	s := Spike{Baseline: base, Window: d.window}
	if cs < spikeFloorPerCPU*float64(max(cpus, 1)) || cs < spikeMinJump*base ||
		cs < base+spikeMADs*madToSigma*mad(d.sorted, base) {
		return s
	}
	s.Active = true
	if base > 0 {
		s.Factor = cs / base
	}
	return s
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// mad is the median of |x - med| over sorted. The deviations grow outward
// from med on both sides, so merging the two sides from the middle yields
// them in order; the median is the one half-way through.
func mad(sorted []float64, med float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	hi, _ := slices.BinarySearch(sorted, med)
	lo := hi - 1
	var prev, cur float64
	for range n/2 + 1 {
		prev = cur
		if hi >= n || (lo >= 0 && med-sorted[lo] <= sorted[hi]-med) {
			cur = med - sorted[lo]
			lo--
		} else {
			cur = sorted[hi] - med
			hi++
		}
	}
	if n%2 == 1 {
		return cur
	}
	return (prev + cur) / 2
}

// SpikeRun is a run of consecutive spike samples of a series, by index,
// First and Last included: one storm, however many samples it lasted.
type SpikeRun struct{ First, Last int }

// SpikeRuns finds the runs of consecutive samples 0..n-1 for which spike
// holds, in order. Every view that speaks of spikes as events (replay
// --info's "top spikes", the replay's [ and ] keys) takes them from here,
// so they count the same storms.
func SpikeRuns(n int, spike func(i int) bool) []SpikeRun {
	var runs []SpikeRun
	open := false
	for i := range n {
		if !spike(i) {
			open = false
			continue
		}
		if !open {
			runs = append(runs, SpikeRun{First: i})
			open = true
		}
		runs[len(runs)-1].Last = i
	}
	return runs
}
