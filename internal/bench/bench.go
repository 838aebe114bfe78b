// Package bench runs ctxtop's load modes over a matrix of pinnings and
// turns the summaries into a table and the conclusions the figures support.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/ctxtop/ctxtop/internal/load"
)

// Plan is the matrix of runs, in the order the table shows them: each mode
// unpinned, with both sides on the first allowed CPU, and with one side on
// each of the first two. Goroutine mode runs unpinned only (the Go
// scheduler places goroutines) and the syscall baseline, one thread, never
// on two CPUs.
func Plan(modes []load.Mode, allowed []int, d time.Duration) []load.Config {
	var plan []load.Config
	for _, m := range modes {
		plan = append(plan, load.Config{Mode: m, Duration: d})
		if m == load.ModeGoroutine || len(allowed) == 0 {
			continue
		}
		plan = append(plan, load.Config{Mode: m, CPUs: []int{allowed[0]}, Duration: d})
		if m != load.ModeSyscall && len(allowed) >= 2 {
			plan = append(plan, load.Config{Mode: m, CPUs: []int{allowed[0], allowed[1]}, Duration: d})
		}
	}
	return plan
}

// Run runs the plan's cells one after another until ctx is done, saying
// which one starts on progress (nil: silent), and returns the summaries of
// the runs that ran.
func Run(ctx context.Context, plan []load.Config, progress io.Writer) ([]load.Summary, error) {
	sums := []load.Summary{}
	for i, cfg := range plan {
		if ctx.Err() != nil {
			break
		}
		if progress != nil {
			fmt.Fprintf(progress, "[%d/%d] %s, %s ...\n", i+1, len(plan), cfg.Mode, load.Pinning(cfg.CPUs))
		}
		run, err := load.Start(cfg)
		if err != nil {
			return sums, fmt.Errorf("%s, %s: %w", cfg.Mode, load.Pinning(cfg.CPUs), err)
		}
		select {
		case <-ctx.Done():
		case <-run.Done():
		}
		sums = append(sums, run.Stop())
	}
	return sums, nil
}

// WriteJSON prints the summaries as one JSON array.
func WriteJSON(w io.Writer, sums []load.Summary) error {
	b, err := json.Marshal(sums)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}
