package stacks

import (
	"math"
	"math/rand/v2"
	"time"
)

// On a host that switches hundreds of thousands of times a second the
// tracepoints cost more than anything the programs do: the kernel's call
// of two attached programs, even ones that return at once, is some 30 ns
// a switch and a waking (an indirect call, through a retpoline), 4–5% of
// a pinned ping-pong's round trip by itself. No program can go below it
// while attached. So on such a host the programs are attached for only a
// part of each refresh, a window at a random place in it, and what they
// saw there stands for the whole refresh: each sample's weight is scaled
// by the refresh's time over the time attached, measured. The window
// moves at random, so a workload with a period of its own is not always
// seen in the same phase of it.
const (
	// dutyFrom is the step in the host's switches a second: from twice
	// it the programs are attached for half of each refresh, from three
	// times a third, from four times a quarter (maxDuty). Below twice it
	// their call costs the host under 1.4% of a CPU (some 35 ns a switch
	// and a waking each) and they stay attached throughout.
	dutyFrom = 100_000
	maxDuty  = 4
	// minWindow is the shortest window: attaching and detaching costs
	// the monitor two wake-ups and the kernel a patch of its call sites,
	// so a short refresh is attached for longer parts of it.
	minWindow = 100 * time.Millisecond
	// windowSpan is how much of the refresh interval a window may fall
	// in: it must end before the next read, which comes one interval
	// after the read that placed it, less the time to derive.
	windowSpan = 0.9
)

// duty is how the programs are attached over a refresh: 1 for throughout,
// k for one window of 1/k of it.
func duty(switchesPerSec float64, interval time.Duration) int {
	k := int(switchesPerSec / dutyFrom)
	k = min(k, maxDuty, int(float64(interval)*windowSpan/float64(minWindow)))
	return max(k, 1)
}

// dutyState is what the collector keeps of the windows; guarded by the
// lifecycle's lock.
type dutyState struct {
	// gen tells a window's timers from those of a later one: each
	// retarget, stop and window end moves it on.
	gen    uint64
	timers [2]*time.Timer
	// attached is whether the programs are; offSince when they were
	// detached, off how long they were detached since the last read.
	attached bool
	offSince time.Time
	off      time.Duration
	lastRead time.Time
}

// cancel ends the window in progress: its timers do nothing any more.
func (d *dutyState) cancel() {
	d.gen++
	for i, t := range d.timers {
		if t != nil {
			t.Stop()
			d.timers[i] = nil
		}
	}
}

// reset starts the accounting afresh at now, attached or not.
func (d *dutyState) reset(now time.Time, attached bool) {
	d.cancel()
	d.attached, d.off, d.lastRead = attached, 0, now
	d.offSince = now
}

// set records that the programs are attached (or not) from now on.
func (d *dutyState) set(now time.Time, on bool) {
	switch {
	case on && !d.attached:
		d.off += now.Sub(d.offSince)
	case !on && d.attached:
		d.offSince = now
	}
	d.attached = on
}

// scale is how many events each one seen stands for since the last read,
// ended at now: the time since over the time attached; exactly 1 when the
// programs stayed attached throughout (or never were: nothing was seen).
// attached is its inverse, the share of the time attached.
func (d *dutyState) scale(now time.Time) (scale, attached float64) {
	off := d.off
	if !d.attached {
		off += now.Sub(d.offSince)
		d.offSince = now
	}
	total := now.Sub(d.lastRead)
	d.off, d.lastRead = 0, now
	switch {
	case off <= 0:
		return 1, 1
	case off >= total:
		return 1, 0
	}
	return float64(total) / float64(total-off), float64(total-off) / float64(total)
}

// scaled is w events seen, scaled by s.
func scaled(w uint64, s float64) uint64 {
	if s == 1 {
		return w
	}
	return uint64(math.Round(float64(w) * s))
}

// window places the programs' next window in the refresh of interval
// that began at the last read, of 1/k of it, at a random offset, calling
// flip(gen, true) at its start and flip(gen, false) at its end.
func (d *dutyState) window(interval time.Duration, k int, flip func(gen uint64, on bool)) {
	win := interval / time.Duration(k)
	span := time.Duration(float64(interval)*windowSpan) - win - time.Since(d.lastRead)
	start := time.Duration(0)
	if span > 0 {
		start = time.Duration(rand.Int64N(int64(span) + 1))
	}
	gen := d.gen
	d.timers[0] = time.AfterFunc(start, func() { flip(gen, true) })
	d.timers[1] = time.AfterFunc(start+win, func() { flip(gen, false) })
}
