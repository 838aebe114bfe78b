// Package pace is the one pacing of every sampling loop, batch, record and
// the monitor alike: samples on a grid of ticks, none closer to the one
// before than MinInterval. It is a leaf, so the monitor's view can pace
// itself without reaching a data source or the pipeline.
package pace

import "time"

// MinInterval is the shortest interval a rate is taken over for a nominal
// refresh interval: half of it. Over a few milliseconds a handful of
// switches scale into absurd rates (a thread at 73% CPU that runs at 25%,
// thread CPU summing past the CPUs there are), which is exactly what a
// stalled host would show if samples were taken back to back.
func MinInterval(nominal time.Duration) time.Duration { return nominal / 2 }

// Pacer places samples on a grid of ticks, start + k·interval, as top
// does: a tick that has passed by the time the last sample is done (a slow
// pass, a stall, SIGSTOP) is skipped, never fired late, and no tick comes
// less than MinInterval after the sample before it.
type Pacer struct {
	interval time.Duration
	start    time.Time
}

// New starts the grid at start.
func New(interval time.Duration, start time.Time) Pacer {
	return Pacer{interval: interval, start: start}
}

// Next is the tick for the sample after one taken at last, now: the first
// tick after now that is at least MinInterval after last.
func (p Pacer) Next(now, last time.Time) time.Time {
	if p.interval <= 0 {
		return now
	}
	k := now.Sub(p.start)/p.interval + 1
	if now.Before(p.start) {
		k = 0
	}
	t := p.start.Add(k * p.interval)
	for t.Sub(last) < MinInterval(p.interval) {
		t = t.Add(p.interval)
	}
	return t
}
