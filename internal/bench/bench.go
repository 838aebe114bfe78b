// Package bench runs ctxtop's load modes over a matrix of pinnings, each
// cell several times, and presents the results: a table per experiment
// with the spread of the runs, the conclusions the figures support (only
// where a difference exceeds the spread), markdown for a ticket, JSON, and
// an SVG chart for a slide.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/ctxtop/ctxtop/internal/load"
)

// Experiment names a group of cells that answer one question; the table,
// the conclusions and the markdown come per experiment, in the order Plan
// first names them. A new experiment (a working-set axis, a thread pool)
// adds a constant here, its cells in Plan, its columns in tables, its
// sentences in Conclusions, and, to draw its cells as lines rather than
// bars, a name per series in seriesName.
type Experiment string

const (
	// NoSwitch: a system call and a goroutine hand-off, the baselines that
	// need no context switch.
	NoSwitch Experiment = "no context switch: a system call, a goroutine hand-off"
	// Switches: threads and processes waking each other, by pinning.
	Switches Experiment = "context switches: threads and processes, unpinned and pinned"
)

// Cell is one point of the matrix and its runs.
type Cell struct {
	Experiment Experiment
	Config     load.Config
	Runs       []load.Summary
}

// DefaultRepeats is how many times bench runs each cell: three runs give a
// spread, and a conclusion that survives it.
const DefaultRepeats = 3

// Plan is the matrix, in the order the tables show it: each mode unpinned,
// with both sides on the first allowed CPU, and with one side on each of
// the first two. A mode that pins its whole process (goroutine) takes one
// CPU, not two; one with a single thread (the syscall baseline) never
// takes two.
func Plan(modes []load.Mode, allowed []int, d time.Duration) []*Cell {
	var plan []*Cell
	add := func(m load.Mode, cpus []int) {
		e := Switches
		if m.Info().NoSwitch {
			e = NoSwitch
		}
		plan = append(plan, &Cell{Experiment: e, Config: load.Config{Mode: m, CPUs: cpus, Duration: d}})
	}
	for _, m := range modes {
		add(m, nil)
		if len(allowed) == 0 {
			continue
		}
		add(m, []int{allowed[0]})
		if i := m.Info(); i.MaxCPUs >= 2 && !i.Goroutines && len(allowed) >= 2 {
			add(m, []int{allowed[0], allowed[1]})
		}
	}
	return plan
}

// Run runs every cell repeats times until ctx is done, saying which run
// starts on progress (nil: silent). The repeats go round the whole matrix
// rather than back to back, so a slow minute on a shared machine spreads
// over every cell instead of skewing one. Cells keep the runs that
// finished; one cut short by ctx is dropped.
func Run(ctx context.Context, plan []*Cell, repeats int, progress io.Writer) error {
	repeats = max(repeats, 1)
	n, total := 0, repeats*len(plan)
	for r := range repeats {
		for _, c := range plan {
			if ctx.Err() != nil {
				return nil
			}
			n++
			cfg := c.Config
			if progress != nil {
				fmt.Fprintf(progress, "[%d/%d] %s, %s (run %d of %d) ...\n", n, total, cfg.Mode, load.Pinning(cfg.CPUs), r+1, repeats)
			}
			run, err := load.Start(cfg)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", cfg.Mode, load.Pinning(cfg.CPUs), err)
			}
			select {
			case <-ctx.Done():
				// Cut short, the run's figures cover a different span and
				// load than its cell's other runs: drop it.
				run.Stop()
				return nil
			case <-run.Done():
			}
			c.Runs = append(c.Runs, run.Stop())
		}
	}
	return nil
}

// WriteJSON prints every run's summary as one JSON array, cell by cell,
// a cell's repeats next to each other.
func WriteJSON(w io.Writer, cells []*Cell) error {
	sums := []load.Summary{}
	for _, c := range cells {
		sums = append(sums, c.Runs...)
	}
	b, err := json.Marshal(sums)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}
