package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtop/ctxtop/internal/cpulist"
	"github.com/ctxtop/ctxtop/internal/load"
)

// loadOptions are ctxtop load's flags.
type loadOptions struct {
	mode       string
	cpus       string
	duration   durationValue
	roundTrips uint64
	pairs      int
	gomaxprocs int
	output     loadOutputValue
	workingSet string
	threads    int
	work       durationValue
	period     durationValue
	cpuQuota   float64
}

func newLoadCmd() *cobra.Command {
	o := loadOptions{mode: string(load.ModeFutex), duration: durationValue(10 * time.Second), pairs: 1, output: "text",
		work: durationValue(load.DefaultWork), period: durationValue(load.DefaultPeriod)}
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Run a ping-pong workload and measure what its switches cost",
		Long: `load runs two sides that wake each other in turn and prints, once a second,
round trips per second, nanoseconds per round trip and the kernel's count of
the workload threads' voluntary and involuntary switches and CPU migrations;
then a summary.

Modes:
` + modeHelp() + `
Every mode runs in a process of its own (this binary, re-executed), so a
monitor that starts a load keeps its own threads quiet. Every summary gives
rescheduling IPIs (/proc/interrupts RES, system-wide) and migrations per round
trip, and, where the CPU's performance counters are available, instructions,
cycles and cache misses per round trip.

--working-set SIZE (futex, pipe, process) makes each side walk SIZE bytes of
its own memory, one touch per cache line, every round trip (lmbench lat_ctx
-s); the summary gives the round trip net of the walk measured without a
switch in the same run: the switch's cost with the caches refilled.

--cpus 0 puts both sides on CPU 0 (like taskset -c 0); --cpus 0,1 puts the
first side on CPU 0 and the second on CPU 1. Without it the kernel places them.
Goroutine mode pins the whole workload process, every thread (taskset -c on a Go
program); syscall mode has one thread and takes one CPU.

ns per switch is per kernel-counted switch: ns per round trip divided by the
switches the kernel counted per round trip. It is shown only where a round trip
holds at least one switch (futex, pipe, process); in goroutine and syscall
modes a round trip is not made of switches and the quotient would mean nothing.`,
		Example: `  ctxtop load                         futex, unpinned, 10 s
  ctxtop load --cpus 0                both threads on CPU 0
  ctxtop load --mode process --cpus 0  compare: taskset -c 0 perf bench sched pipe
  ctxtop load --mode goroutine --cpus 0   the whole Go process on CPU 0
  ctxtop load -o json --duration 2
  ctxtop load --working-set 1M --cpus 0   each side walks 1 MiB per round trip
  ctxtop load --mode pool --threads 16    16 CPU-bound threads
  sudo ctxtop load --mode pool --threads 4 --cpu-quota 0.5
  ctxtop load --mode poll --threads 8 --period 5ms`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := o.config(cmd)
			if err != nil {
				return err
			}
			return runLoad(cmd.Context(), cmd.OutOrStdout(), cfg, o.output == "json")
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.StringVar(&o.mode, "mode", o.mode, orList(modeNames()))
	f.StringVar(&o.cpus, "cpus", "", "pin: one CPU for both sides (0) or one each (0,1); default unpinned")
	f.Var(&o.duration, "duration", "seconds (2) or a duration (500ms); 0 runs until interrupted")
	f.Uint64Var(&o.roundTrips, "round-trips", 0, "stop after this many round trips (over all pairs)")
	f.IntVar(&o.pairs, "pairs", o.pairs, "independent ping-pong pairs")
	f.IntVar(&o.gomaxprocs, "gomaxprocs", 0, "GOMAXPROCS of goroutine mode's workload process (default: Go's)")
	f.StringVar(&o.workingSet, "working-set", "0", "bytes each side walks per round trip: 64K, 1M, 8M (futex, pipe, process)")
	f.IntVar(&o.threads, "threads", 0, "pool and poll threads (default: one per allowed CPU)")
	f.Var(&o.work, "work", "one pool work item's CPU time")
	f.Var(&o.period, "period", "poll's sleep between wake-ups")
	f.Float64Var(&o.cpuQuota, "cpu-quota", 0, "pool: limit to this many CPUs in a cgroup ctxtop makes (root)")
	f.VarP(&o.output, "output", "o", "text, or json: the summary as one JSON object")
	completeValues(cmd, "mode", modeNames()...)
	completeValues(cmd, "output", "text", "json")
	return cmd
}

// experimentConfig reads the flags of the working-set, pool and poll
// experiments into cfg; every error is one line naming the flag.
func (o *loadOptions) experimentConfig(cmd *cobra.Command, cfg *load.Config) error {
	fl := cmd.Flags()
	m, info := cfg.Mode, cfg.Mode.Info()
	if fl.Changed("working-set") {
		ws, err := parseWorkingSet(o.workingSet)
		if err != nil {
			return err
		}
		if ws > 0 && !info.Walks {
			return fmt.Errorf("--working-set applies to %s, not %s", load.ModeList(func(i load.Info) bool { return i.Walks }), m)
		}
		cfg.WorkingSet = ws
	}
	for _, f := range []struct {
		name  string
		takes func(load.Info) bool
	}{
		{"threads", func(i load.Info) bool { return i.Threaded }},
		{"work", func(i load.Info) bool { return i.TakesWork }},
		{"period", func(i load.Info) bool { return i.TakesPeriod }},
		{"cpu-quota", func(i load.Info) bool { return i.TakesCPUQuota }},
	} {
		if fl.Changed(f.name) && !f.takes(info) {
			return fmt.Errorf("--%s applies to %s, not %s", f.name, load.ModeList(f.takes), m)
		}
	}
	if !info.Threaded {
		return nil
	}
	if fl.Changed("pairs") || fl.Changed("round-trips") || fl.Changed("cpus") {
		return fmt.Errorf("%s mode takes --threads and --duration, not --pairs, --round-trips or --cpus", m)
	}
	cfg.Threads = o.threads
	if !fl.Changed("threads") {
		allowed, err := load.AllowedCPUs()
		if err != nil {
			return err
		}
		cfg.Threads = max(len(allowed), 1)
	}
	if cfg.Threads < 1 || cfg.Threads > load.MaxThreads {
		return fmt.Errorf("--threads must be 1 to %d, got %d", load.MaxThreads, cfg.Threads)
	}
	if fl.Changed("work") {
		if d := time.Duration(o.work); d < load.MinWork || d > load.MaxWork {
			return fmt.Errorf("--work must be %v to %v, got %v", load.MinWork, load.MaxWork, d)
		}
		cfg.Work = time.Duration(o.work)
	}
	if fl.Changed("period") {
		if d := time.Duration(o.period); d < load.MinPeriod || d > load.MaxPeriod {
			return fmt.Errorf("--period must be %v to %v, got %v", load.MinPeriod, load.MaxPeriod, d)
		}
		cfg.Period = time.Duration(o.period)
	}
	if fl.Changed("cpu-quota") {
		if !(o.cpuQuota >= load.MinCPUQuota && o.cpuQuota <= load.MaxCPUQuota) {
			return fmt.Errorf("--cpu-quota must be %g to %d CPUs, got %g", load.MinCPUQuota, load.MaxCPUQuota, o.cpuQuota)
		}
		cfg.CPUQuota = o.cpuQuota
	}
	return nil
}

// modeHelp is the modes' paragraphs for --help, each wrapped beside its
// name.
func modeHelp() string {
	const indent, width = 13, 79
	var b strings.Builder
	for _, i := range load.Modes() {
		line := fmt.Sprintf("  %-*s", indent-2, i.Mode)
		for _, word := range strings.Fields(i.Help) {
			if len(line) > indent && len(line)+1+len(word) > width {
				b.WriteString(line + "\n")
				line = strings.Repeat(" ", indent)
			}
			if len(line) > indent {
				line += " "
			}
			line += word
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// orList is "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// parseWorkingSet reads one --working-set size and checks its range.
func parseWorkingSet(s string) (int64, error) {
	ws, err := load.ParseSize(s)
	if err != nil {
		return 0, fmt.Errorf("--working-set: %w", err)
	}
	if ws > load.MaxWorkingSet {
		return 0, fmt.Errorf("--working-set %s is more than the %s a side may walk", s, load.FormatSize(load.MaxWorkingSet))
	}
	return ws, nil
}

// config validates the flags into a load.Config; every error is one line.
func (o *loadOptions) config(cmd *cobra.Command) (load.Config, error) {
	m, err := load.ParseMode(o.mode)
	if err != nil {
		return load.Config{}, fmt.Errorf("--mode: %w", err)
	}
	cfg := load.Config{Mode: m, Pairs: o.pairs, Duration: time.Duration(o.duration), RoundTrips: o.roundTrips}
	if o.pairs < 1 {
		return cfg, fmt.Errorf("--pairs must be at least 1, got %d", o.pairs)
	}
	if cmd.Flags().Changed("round-trips") {
		if o.roundTrips == 0 {
			return cfg, errors.New("--round-trips must be at least 1")
		}
		if !cmd.Flags().Changed("duration") {
			cfg.Duration = 0
		}
	}
	if cmd.Flags().Changed("cpus") {
		if cfg.CPUs, err = parseCPUsFlag(o.cpus); err != nil {
			return cfg, err
		}
		if m.Info().MaxCPUs == 1 && len(cfg.CPUs) > 1 {
			return cfg, fmt.Errorf("--cpus: %s mode runs one thread, so it takes one CPU (--cpus 0), not two", m)
		}
	}
	if o.gomaxprocs < 0 || o.gomaxprocs > load.MaxThreads {
		return cfg, fmt.Errorf("--gomaxprocs must be 1 to %d, got %d", load.MaxThreads, o.gomaxprocs)
	}
	cfg.GoMaxProcs = o.gomaxprocs
	if err := o.experimentConfig(cmd, &cfg); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func parseCPUsFlag(s string) ([]int, error) {
	cpus, err := cpulist.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("--cpus: %w", err)
	}
	if err := load.ValidateCPUs(cpus); err != nil {
		return nil, fmt.Errorf("--%w", err)
	}
	return cpus, nil
}

// runLoad runs one workload in the foreground until it ends or a signal
// arrives, then prints the summary of what ran.
func runLoad(ctx context.Context, w io.Writer, cfg load.Config, asJSON bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	return load.Report(ctx, w, cfg, asJSON)
}

// newLoadChildCmd is the workload process and process mode's partner:
// ctxtop re-executes itself with it.
func newLoadChildCmd() *cobra.Command {
	return &cobra.Command{
		Use:                load.ChildCommand,
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			return load.ChildMain(args)
		},
	}
}
