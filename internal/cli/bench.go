package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtop/ctxtop/internal/bench"
	"github.com/ctxtop/ctxtop/internal/load"
)

// benchOptions are ctxtop bench's flags.
type benchOptions struct {
	duration durationValue
	repeats  int
	modes    string
	output   benchFormat
	plot     string
	// workingSet is the --working-set axis, comma-separated sizes.
	workingSet string
}

// benchFormat is bench's -o: text, json or markdown.
type benchFormat string

func (o *benchFormat) String() string { return string(*o) }
func (o *benchFormat) Type() string   { return "text|json|markdown" }

func (o *benchFormat) Set(s string) error {
	switch s {
	case "text", "json", "markdown":
		*o = benchFormat(s)
		return nil
	case "md":
		*o = "markdown"
		return nil
	}
	return errors.New("want text, json or markdown")
}

func newBenchCmd() *cobra.Command {
	o := benchOptions{duration: durationValue(time.Second), repeats: bench.DefaultRepeats, output: "text"}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure what a context switch costs here: every mode, unpinned and pinned",
		Long: `bench runs each load mode unpinned, with both sides on one CPU, and with one
side on each of two CPUs (when two are allowed), --duration each, --repeats
times over the whole matrix, then prints per experiment the median
nanoseconds per round trip and the range of the runs, ns per kernel-counted
switch, switches per round trip, the ratio to the unpinned run, and what the
figures say. A difference is stated only when the runs of the two cells do
not overlap; otherwise the conclusion says there is no clear difference.

The pool experiment runs CPU-bound threads, 1, one per CPU, two and eight
per CPU, and gives items/s, involuntary switches/s and run-queue wait.
--working-set 0,64K,1M,8M adds the indirect cost: futex, pipe and process
(those in --modes) with each side walking that much memory per round trip,
both on one CPU, net of the walk measured without a switch. Every row gives
rescheduling IPIs and migrations per round trip and, where the CPU's
performance counters are available, instructions, cycles and cache misses.

Goroutine mode runs unpinned and with the whole process on one CPU; the
syscall baseline, one thread, never on two CPUs. ns per switch is ns per
round trip divided by the kernel-counted switches per round trip, shown only
where a round trip holds at least one switch.

-o markdown prints the tables for a ticket or a slide; --plot FILE.svg draws
ns per round trip per mode and pinning, whiskers spanning the runs.`,
		Example: `  ctxtop bench
  ctxtop bench --modes futex,process --duration 2 --repeats 5
  ctxtop bench -o markdown --plot switch-cost.svg
  ctxtop bench --modes futex --working-set 0,64K,1M,8M
  ctxtop bench --modes pool
  ctxtop bench -o json | jq '.[] | {mode, cpus, ns_per_round_trip}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.duration <= 0 {
				return errors.New("--duration must be positive")
			}
			if o.repeats < 1 || o.repeats > 100 {
				return fmt.Errorf("--repeats must be 1 to 100, got %d", o.repeats)
			}
			var modes []load.Mode
			for _, i := range load.Modes() {
				if i.Bench {
					modes = append(modes, i.Mode)
				}
			}
			if o.modes != "" {
				modes = nil
				for s := range strings.SplitSeq(o.modes, ",") {
					m, err := load.ParseMode(strings.TrimSpace(s))
					if err != nil {
						return fmt.Errorf("--modes: %w", err)
					}
					if !m.Info().Bench {
						return fmt.Errorf("--modes: %s is not a bench experiment; run ctxtop load --mode %s", m, m)
					}
					modes = append(modes, m)
				}
			}
			allowed, err := load.AllowedCPUs()
			if err != nil {
				return err
			}
			sizes, err := parseWorkingSets(o.workingSet)
			if err != nil {
				return err
			}
			var plot *os.File
			if o.plot != "" {
				// Before the runs, so a path that cannot be written fails in
				// a second, not after minutes of measuring.
				if plot, err = createBeside(o.plot); err != nil {
					return fmt.Errorf("--plot %s: %w", o.plot, err)
				}
				defer os.Remove(plot.Name()) // after a successful rename, a no-op
				defer plot.Close()
			}
			err = runBench(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), benchPlan(modes, sizes, allowed, time.Duration(o.duration)), o, plot)
			if err == nil && plot != nil {
				if err = os.Rename(plot.Name(), o.plot); err != nil {
					err = fmt.Errorf("--plot %s: %w", o.plot, unwrapPath(err))
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.Var(&o.duration, "duration", "each run: seconds (2) or a duration (500ms)")
	f.IntVar(&o.repeats, "repeats", o.repeats, "runs of each cell, for the spread")
	f.StringVar(&o.modes, "modes", "", "comma-separated modes to run (default: all)")
	f.VarP(&o.output, "output", "o", "text, json (every run) or markdown (tables)")
	f.StringVar(&o.plot, "plot", "", "also draw the results as SVG to this file")
	f.StringVar(&o.workingSet, "working-set", "", "add the working-set axis: sizes each side walks per round trip (0,64K,1M,8M)")
	completeValues(cmd, "output", "text", "json", "markdown")
	completeValues(cmd, "modes", modeNames()...)
	return cmd
}

// benchPlan is the ping-pong matrix of the modes, then the working-set axis
// when sizes are given, then the threaded modes (pool) when asked for.
func benchPlan(modes []load.Mode, sizes []int64, allowed []int, d time.Duration) []*bench.Cell {
	var pingPong, threaded []load.Mode
	for _, m := range modes {
		if m.Info().Threaded {
			threaded = append(threaded, m)
			continue
		}
		pingPong = append(pingPong, m)
	}
	plan := bench.Plan(pingPong, allowed, d)
	if len(sizes) > 0 {
		walkers := pingPong
		if len(walkers) == 0 {
			walkers = []load.Mode{load.ModeFutex}
		}
		plan = append(plan, bench.PlanWorkingSet(walkers, sizes, allowed, d)...)
	}
	for _, m := range threaded {
		plan = append(plan, bench.PlanPool(m, len(allowed), d)...)
	}
	return plan
}

// parseWorkingSets reads --working-set's comma-separated sizes.
func parseWorkingSets(list string) ([]int64, error) {
	if list == "" {
		return nil, nil
	}
	var sizes []int64
	for s := range strings.SplitSeq(list, ",") {
		ws, err := parseWorkingSet(strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		if slices.Contains(sizes, ws) {
			return nil, fmt.Errorf("--working-set: %s given twice", strings.TrimSpace(s))
		}
		sizes = append(sizes, ws)
	}
	if len(sizes) > 16 {
		return nil, fmt.Errorf("--working-set: %d sizes; give at most 16", len(sizes))
	}
	return sizes, nil
}

func runBench(ctx context.Context, w, progress io.Writer, plan []*bench.Cell, o benchOptions, plot *os.File) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if o.output == "json" {
		progress = nil
	}
	if err := bench.Run(ctx, plan, o.repeats, progress); err != nil {
		return err
	}
	if plot != nil {
		if err := bench.WriteSVG(plot, plan); err != nil {
			return fmt.Errorf("--plot: %w", unwrapPath(err))
		}
		if err := plot.Close(); err != nil {
			return fmt.Errorf("--plot: %w", unwrapPath(err))
		}
	}
	switch o.output {
	case "json":
		return bench.WriteJSON(w, plan)
	case "markdown":
		bench.WriteMarkdown(w, plan)
	default:
		bench.WriteText(w, plan)
	}
	return nil
}

// createBeside opens a new file next to path, to be renamed onto it once
// written: a bench that fails or is interrupted leaves any old chart alone,
// and a directory that cannot be written is found before the runs.
func createBeside(path string) (*os.File, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, errors.New("is a directory")
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, fmt.Errorf("cannot write in %s: %w", dir, unwrapPath(err))
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, unwrapPath(err)
	}
	return f, nil
}

// unwrapPath drops the temporary file's name from an error: the user named
// the target, and the message names it.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
