package pipeline

import (
	"context"
	"time"
)

// Pacer places samples on a grid of ticks, start + k·interval, as top
// does: a tick that has passed by the time the last sample is done (a slow
// pass, a stall, SIGSTOP) is skipped, never fired late, and no tick comes
// less than MinInterval after the sample before it.
type Pacer struct {
	interval time.Duration
	start    time.Time
}

// NewPacer starts the grid at start.
func NewPacer(interval time.Duration, start time.Time) Pacer {
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

// Run calls step on the pacer's ticks (interval from now) until ctx ends,
// step fails, or n steps are done (n = 0: no limit). A zero interval runs
// the steps back to back, for a recording replayed as reports, where each
// sample already has its recorded interval.
//
// It is the one sampling loop of batch mode, record and replay -b: none of
// them ever takes two samples back to back, however late a tick is served.
// It returns nil when ctx ends; the caller tells why from ctx.
func Run(ctx context.Context, interval time.Duration, n int, step func() error) error {
	start := time.Now()
	pace := NewPacer(interval, start)
	timer := time.NewTimer(interval)
	defer timer.Stop()
	last := start
	for i := 1; n == 0 || i <= n; i++ {
		if interval > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-timer.C:
			}
		} else if ctx.Err() != nil {
			return nil
		}
		last = time.Now()
		if err := step(); err != nil {
			return err
		}
		if interval > 0 {
			timer.Reset(time.Until(pace.Next(time.Now(), last)))
		}
	}
	return nil
}
