package model

import (
	"cmp"
	"math"
	"time"

	"github.com/ctxtop/ctxtop/internal/sorts"
)

// LatencyBuckets is the number of log2 buckets in a wake-to-run latency
// histogram: bucket i counts latencies in [2^i, 2^(i+1)) ns, the last one
// everything from 2^31 ns (2.1 s) up.
const LatencyBuckets = 32

// WakeupPairCount is one (waker thread → wakee thread) pair as the kernel
// counted it since the previous read: its wake-ups, and what became of
// those the wakee's next waking resolved (each wake-up is resolved at the
// wakee's next one, so these may be wake-ups of an earlier read): how many
// ran the wakee on another CPU than the waker's, and the wake-to-run
// latencies of those the wakee ran through unpreempted.
type WakeupPairCount struct {
	WakerPID, WakerTID int
	WakerComm          string
	WakeePID, WakeeTID int
	WakeeComm          string
	Wakeups            uint64
	Resolved           uint64
	CrossCPU           uint64
	Latency            [LatencyBuckets]uint64
}

// CPUSchedCount are one CPU's running totals since the programs attached.
type CPUSchedCount struct {
	// Switches are context switches on this CPU.
	Switches uint64
	// Migrations are tasks moved onto this CPU.
	Migrations uint64
}

// WakeupSample is one read of the wake-up tracer. Pairs are counts since
// the previous read (the tracer drains them); CPUs and Dropped are running
// totals.
type WakeupSample struct {
	Time time.Time
	// Since is when the counts of Pairs began: the previous read, or when
	// the programs attached for the first read after that. Zero when not
	// known.
	Since time.Time
	Pairs []WakeupPairCount
	CPUs  []CPUSchedCount
	// Dropped counts pair wake-ups not recorded because the pair map was full.
	Dropped uint64
}

// Wakers that are no thread. A wake-up in an interrupt runs in the context
// of whatever task the interrupt came upon, so it is counted for the
// interrupt instead: a timer's callback (an hrtimer or the timer wheel, in
// a hard interrupt or a softirq), another hard interrupt (a device's
// completion, an IPI's work), or another softirq (network receive, block
// completion, tasklets). Their WakerPID and WakerTID are these negative
// numbers, never a thread to look up; WakerComm is the name shown. The
// idle task's wake-ups outside interrupts keep TID 0 and swapper/N.
const (
	WakerIRQ     = -1
	WakerSoftIRQ = -2
	WakerTimer   = -3

	WakerIRQComm     = "irq"
	WakerSoftIRQComm = "softirq"
	WakerTimerComm   = "timer"
)

// WakeupPair is one pair's rates over an interval.
type WakeupPair struct {
	WakerPID, WakerTID int
	WakerComm          string
	WakeePID, WakeeTID int
	WakeeComm          string
	PerSec             float64
	// CrossCPUPercent is the share of wake-ups after which the wakee ran on
	// another CPU than the one the waker woke it from, over the Resolved
	// ones (0 of none).
	CrossCPUPercent float64
	// LatencyP50Micros and LatencyP99Micros are the wakee's wake-to-run
	// latency over the interval, from all its wakers, over its Timed
	// wake-ups (0 of none).
	LatencyP50Micros float64
	LatencyP99Micros float64
	// Resolved is how many of the pair's wake-ups the cross-CPU share is
	// over; Timed how many of the wakee's wake-ups the latencies are over.
	// Zero means the figure is not known for this interval.
	Resolved, Timed uint64
}

// WakerIsInterrupt tells whether the waker is an interrupt (WakerIRQ,
// WakerSoftIRQ or WakerTimer) rather than a thread.
func (p *WakeupPair) WakerIsInterrupt() bool { return p.WakerTID < 0 }

// CrossCPUKnown tells whether CrossCPUPercent is over any wake-up.
func (p *WakeupPair) CrossCPUKnown() bool { return p.Resolved > 0 }

// LatencyKnown tells whether the latencies are over any wake-up.
func (p *WakeupPair) LatencyKnown() bool { return p.Timed > 0 }

// CPUSchedRates are one CPU's context switches and migrations per second.
type CPUSchedRates struct {
	SwitchesPerSec   float64
	MigrationsPerSec float64
}

// Wakeups is the wake-up graph over one interval.
type Wakeups struct {
	Interval time.Duration
	// Pairs are sorted busiest first, then by waker and wakee TID, then
	// by waker name.
	Pairs []WakeupPair
	// PerCPU is empty on the first read, which has no previous one.
	PerCPU []CPUSchedRates
	// Dropped is the number of wake-ups in the interval that could not be
	// counted because the pair map was full.
	Dropped uint64
	// Unavailable says why there are no figures (missing privileges or
	// kernel support, and what to do about it); empty when there are.
	Unavailable string
}

// ComputeWakeups derives the rates between two reads of the tracer; prev
// is nil for the first read after the programs attached, whose counts all
// started at zero at since.
func ComputeWakeups(prev *WakeupSample, since time.Time, cur *WakeupSample) Wakeups {
	start := since
	var prevCPUs []CPUSchedCount
	var prevDropped uint64
	if prev != nil {
		start, prevCPUs, prevDropped = prev.Time, prev.CPUs, prev.Dropped
	}
	w := Wakeups{Interval: cur.Time.Sub(start), Pairs: []WakeupPair{}}
	if cur.Dropped >= prevDropped {
		w.Dropped = cur.Dropped - prevDropped
	}
	if w.Interval <= 0 {
		return w
	}
	secs := w.Interval.Seconds()
	if prev == nil {
		prevCPUs = make([]CPUSchedCount, len(cur.CPUs))
	}
	if len(prevCPUs) == len(cur.CPUs) {
		w.PerCPU = make([]CPUSchedRates, len(cur.CPUs))
		for i, c := range cur.CPUs {
			p := prevCPUs[i]
			w.PerCPU[i] = CPUSchedRates{SwitchesPerSec: delta(p.Switches, c.Switches) / secs, MigrationsPerSec: delta(p.Migrations, c.Migrations) / secs}
		}
	}

	// The latency is the wakee's, whoever woke it: sum its pairs' histograms.
	hists := map[int]*[LatencyBuckets]uint64{}
	for i := range cur.Pairs {
		p := &cur.Pairs[i]
		h := hists[p.WakeeTID]
		if h == nil {
			h = new([LatencyBuckets]uint64)
			hists[p.WakeeTID] = h
		}
		for b, n := range p.Latency {
			h[b] += n
		}
	}
	for i := range cur.Pairs {
		p := &cur.Pairs[i]
		// A pair with no wake-up in the interval, only the outcome of an
		// earlier one, adds to its wakee's latencies and is not listed.
		if p.Wakeups == 0 {
			continue
		}
		h := hists[p.WakeeTID]
		wp := WakeupPair{
			WakerPID: p.WakerPID, WakerTID: p.WakerTID, WakerComm: p.WakerComm,
			WakeePID: p.WakeePID, WakeeTID: p.WakeeTID, WakeeComm: p.WakeeComm,
			PerSec:           float64(p.Wakeups) / secs,
			LatencyP50Micros: LatencyPercentile(h, 50) / 1e3,
			LatencyP99Micros: LatencyPercentile(h, 99) / 1e3,
			Resolved:         p.Resolved,
		}
		if p.Resolved > 0 {
			wp.CrossCPUPercent = 100 * float64(min(p.CrossCPU, p.Resolved)) / float64(p.Resolved)
		}
		for _, n := range h {
			wp.Timed += n
		}
		w.Pairs = append(w.Pairs, wp)
	}
	sorts.Func(w.Pairs, func(a, b WakeupPair) int {
		// Every CPU's idle task is TID 0: its name (swapper/N) tells them apart.
		return cmp.Or(cmp.Compare(b.PerSec, a.PerSec), cmp.Compare(a.WakerTID, b.WakerTID), cmp.Compare(a.WakeeTID, b.WakeeTID),
			cmp.Compare(a.WakerComm, b.WakerComm))
	})
	return w
}

// LatencyPercentile is the q-th percentile (0–100) of a log2 histogram in
// nanoseconds, interpolated linearly inside the bucket it falls in; 0 for
// an empty histogram.
func LatencyPercentile(h *[LatencyBuckets]uint64, q float64) float64 {
	var total uint64
	for _, n := range h {
		total += n
	}
	if total == 0 {
		return 0
	}
	rank := q / 100 * float64(total)
	var seen float64
	for b, n := range h {
		if n == 0 {
			continue
		}
		if seen+float64(n) >= rank {
			lo := math.Ldexp(1, b)
			if b == 0 {
				lo = 0
			}
			hi := math.Ldexp(1, b+1)
			return lo + (hi-lo)*(rank-seen)/float64(n)
		}
		seen += float64(n)
	}
	return math.Ldexp(1, LatencyBuckets)
}

// WakersOf returns the pairs whose wakee is tid, busiest first, at most n.
func (w *Wakeups) WakersOf(tid, n int) []WakeupPair {
	return w.top(n, func(p *WakeupPair) bool { return p.WakeeTID == tid })
}

// WakeesOf returns the pairs whose waker is tid, busiest first, at most n.
func (w *Wakeups) WakeesOf(tid, n int) []WakeupPair {
	return w.top(n, func(p *WakeupPair) bool { return p.WakerTID == tid })
}

func (w *Wakeups) top(n int, keep func(*WakeupPair) bool) []WakeupPair {
	var out []WakeupPair
	for i := range w.Pairs {
		if len(out) == n {
			break
		}
		if keep(&w.Pairs[i]) {
			out = append(out, w.Pairs[i])
		}
	}
	return out
}

// WakeFigures sum the wake-ups among a set of threads (a load's, a
// process's): how many a second, the share that crossed CPUs and how long
// the wakees waited to run. Each share weighs its pair's rate, over the
// pairs it is known for; LatencyP50Micros is so a weighted mean of the
// pairs' medians, LatencyP99Micros the worst pair's p99.
type WakeFigures struct {
	PerSec           float64
	CrossCPUPercent  float64
	LatencyP50Micros float64
	LatencyP99Micros float64
}

// Among is the figures of the pairs whose waker and wakee are both in the
// set; false when no such pair has its CPUs and its latency known, so
// there is nothing to show.
func (w *Wakeups) Among(in func(pid, tid int) bool) (WakeFigures, bool) {
	var n, cross, nCross, p50, nTimed, p99 float64
	for i := range w.Pairs {
		p := &w.Pairs[i]
		if !in(p.WakerPID, p.WakerTID) || !in(p.WakeePID, p.WakeeTID) {
			continue
		}
		n += p.PerSec
		if p.CrossCPUKnown() {
			cross += p.PerSec * p.CrossCPUPercent / 100
			nCross += p.PerSec
		}
		if p.LatencyKnown() {
			p50 += p.PerSec * p.LatencyP50Micros
			nTimed += p.PerSec
			p99 = max(p99, p.LatencyP99Micros)
		}
	}
	if n == 0 || nCross == 0 || nTimed == 0 {
		return WakeFigures{}, false
	}
	return WakeFigures{PerSec: n, CrossCPUPercent: 100 * cross / nCross, LatencyP50Micros: p50 / nTimed, LatencyP99Micros: p99}, true
}
