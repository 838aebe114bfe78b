package pipeline

import (
	"context"
	"time"

	"github.com/ctxtop/ctxtop/internal/pace"
)

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
	grid := pace.New(interval, start)
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
			timer.Reset(time.Until(grid.Next(time.Now(), last)))
		}
	}
	return nil
}
