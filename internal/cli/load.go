package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtop/ctxtop/internal/load"
)

// loadOptions are ctxtop load's flags.
type loadOptions struct {
	mode       string
	cpus       string
	duration   time.Duration
	roundTrips uint64
	pairs      int
	gomaxprocs int
	output     outputValue
}

func newLoadCmd() *cobra.Command {
	o := loadOptions{mode: string(load.ModeFutex), duration: 10 * time.Second, pairs: 1, output: "text"}
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Run a ping-pong workload and measure what its switches cost",
		Long: `load runs two sides that wake each other in turn and prints, once a second,
round trips per second, nanoseconds per round trip and the kernel's count of
the workload threads' voluntary and involuntary switches and CPU migrations;
then a summary.

Modes:
  futex      two OS threads, FUTEX_WAIT/FUTEX_WAKE on a shared word (Java's park/unpark)
  pipe       two OS threads over a pair of pipes (perf bench sched pipe -T)
  process    two processes over a pair of pipes (perf bench sched pipe)
  goroutine  two goroutines over unbuffered channels: no kernel switch at all
  syscall    one thread calling getppid: a mode switch, no context switch

--cpus 0 puts both sides on CPU 0 (like taskset -c 0); --cpus 0,1 puts the
first side on CPU 0 and the second on CPU 1. Without it the kernel places them.`,
		Example: `  ctxtop load                         futex, unpinned, 10 s
  ctxtop load --cpus 0                both threads on CPU 0
  ctxtop load --mode process --cpus 0 compare: taskset -c 0 perf bench sched pipe
  ctxtop load -o json --duration 2s`,
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
	f.StringVar(&o.mode, "mode", o.mode, "goroutine, futex, pipe, process or syscall")
	f.StringVar(&o.cpus, "cpus", "", "pin: one CPU for both sides (0) or one each (0,1); default unpinned")
	f.DurationVar(&o.duration, "duration", o.duration, "how long to run; 0 runs until interrupted")
	f.Uint64Var(&o.roundTrips, "round-trips", 0, "stop after this many round trips (over all pairs)")
	f.IntVar(&o.pairs, "pairs", o.pairs, "independent ping-pong pairs")
	f.IntVar(&o.gomaxprocs, "gomaxprocs", 0, "set GOMAXPROCS (default: Go's)")
	f.VarP(&o.output, "output", "o", "text, or json: the summary as one JSON object")
	return cmd
}

// config validates the flags into a load.Config; every error is one line.
func (o *loadOptions) config(cmd *cobra.Command) (load.Config, error) {
	m, err := load.ParseMode(o.mode)
	if err != nil {
		return load.Config{}, fmt.Errorf("--mode: %w", err)
	}
	cfg := load.Config{Mode: m, Pairs: o.pairs, Duration: o.duration, RoundTrips: o.roundTrips}
	if o.pairs < 1 {
		return cfg, fmt.Errorf("--pairs must be at least 1, got %d", o.pairs)
	}
	if o.duration < 0 {
		return cfg, fmt.Errorf("--duration must not be negative, got %v", o.duration)
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
	}
	if o.gomaxprocs < 0 {
		return cfg, fmt.Errorf("--gomaxprocs must be positive, got %d", o.gomaxprocs)
	}
	if o.gomaxprocs > 0 {
		runtime.GOMAXPROCS(o.gomaxprocs)
	}
	return cfg, nil
}

func parseCPUsFlag(s string) ([]int, error) {
	cpus, err := load.ParseCPUList(s)
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
	run, err := load.Start(cfg)
	if err != nil {
		return err
	}
	if !asJSON {
		fmt.Fprintf(w, "%s, %s, %s\n", cfg.Mode, pinning(cfg.CPUs), plural(max(cfg.Pairs, 1), "pair"))
		fmt.Fprintf(w, "%8s %13s %10s %12s %13s %9s\n", "elapsed", "round trips/s", "ns/trip", "voluntary/s", "involuntary/s", "migr/s")
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last lineMark
	last.read(run.Progress(), cfg.Mode)
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-run.Done():
			break loop
		case <-tick.C:
			if asJSON {
				continue
			}
			var cur lineMark
			cur.read(run.Progress(), cfg.Mode)
			printLine(w, last, cur, max(cfg.Pairs, 1))
			last = cur
		}
	}
	sum := run.Stop()
	if asJSON {
		b, err := json.Marshal(sum)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	}
	printSummary(w, sum)
	return nil
}

// lineMark is what a per-second line is the difference of.
type lineMark struct {
	at         time.Duration
	roundTrips uint64
	c          load.Counters
	ok         bool
}

// read sums the kernel counters of the workload's threads now: this
// process's workload threads and the child's, or every thread of this
// process in goroutine mode, whose goroutines have no thread of their own.
func (m *lineMark) read(p load.Progress, mode load.Mode) {
	m.at, m.roundTrips = p.Elapsed, p.RoundTrips
	m.c = load.Counters{HasMigrations: true}
	m.ok = true
	add := func(c load.Counters, err error) {
		if err != nil {
			m.ok = false
			return
		}
		m.c.Voluntary += c.Voluntary
		m.c.Involuntary += c.Involuntary
		m.c.Migrations += c.Migrations
		m.c.HasMigrations = m.c.HasMigrations && c.HasMigrations
	}
	if mode == load.ModeGoroutine {
		for _, pid := range p.PIDs {
			add(load.ProcessCounters(pid))
		}
		return
	}
	for _, t := range p.Threads {
		add(load.ReadCounters("/proc", t.PID, t.TID))
	}
}

// printLine prints the second from a to b; ns/trip is one pair's, as in
// the summary.
func printLine(w io.Writer, a, b lineMark, pairs int) {
	dt := (b.at - a.at).Seconds()
	if dt <= 0 {
		return
	}
	trips := b.roundTrips - a.roundTrips
	ns := "-"
	if trips > 0 {
		ns = group(float64(b.at-a.at) * float64(pairs) / float64(trips))
	}
	vol, invol, migr := "-", "-", "-"
	if a.ok && b.ok && b.c.Voluntary >= a.c.Voluntary && b.c.Involuntary >= a.c.Involuntary {
		vol = group(float64(b.c.Voluntary-a.c.Voluntary) / dt)
		invol = group(float64(b.c.Involuntary-a.c.Involuntary) / dt)
		if a.c.HasMigrations && b.c.HasMigrations && b.c.Migrations >= a.c.Migrations {
			migr = group(float64(b.c.Migrations-a.c.Migrations) / dt)
		}
	}
	fmt.Fprintf(w, "%7.1fs %13s %10s %12s %13s %9s\n", b.at.Seconds(), group(float64(trips)/dt), ns, vol, invol, migr)
}

func printSummary(w io.Writer, s load.Summary) {
	fmt.Fprintf(w, "\n%s, %s, %s, %.2fs: %s round trips\n", s.Mode, pinning(s.CPUs), plural(s.Pairs, "pair"), s.DurationS, group(float64(s.RoundTrips)))
	if s.RoundTrips == 0 {
		return
	}
	fmt.Fprintf(w, "  %s ns per round trip\n", group(s.NsPerRoundTrip))
	fmt.Fprintf(w, "  %.2f switches per round trip (kernel-counted: %s voluntary, %s involuntary)\n",
		s.SwitchesPerRoundTrip, group(float64(s.SwitchesVoluntary)), group(float64(s.SwitchesInvoluntary)))
	if s.NsPerSwitch > 0 && s.SwitchesPerRoundTrip >= 0.5 {
		fmt.Fprintf(w, "  %s ns per switch\n", group(s.NsPerSwitch))
	}
	if s.Migrations != nil {
		fmt.Fprintf(w, "  %s CPU migrations\n", group(float64(*s.Migrations)))
	} else {
		fmt.Fprintln(w, "  CPU migrations: unknown (no se.nr_migrations in /proc/PID/task/TID/sched, or a thread's file could not be read)")
	}
	if s.Mode == load.ModeGoroutine {
		fmt.Fprintln(w, "  (goroutine mode counts every thread of this process: the goroutines have none of their own)")
	}
}

func pinning(cpus []int) string {
	switch len(cpus) {
	case 0:
		return "unpinned"
	case 1:
		return "both on CPU " + strconv.Itoa(cpus[0])
	}
	return fmt.Sprintf("CPUs %d and %d", cpus[0], cpus[1])
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// group formats a non-negative figure rounded to an integer with thousands
// separators, so seven-digit rates stay readable.
func group(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// newLoadChildCmd is the other side of process mode: ctxtop re-executes
// itself with it.
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

// benchOptions are ctxtop bench's flags.
type benchOptions struct {
	duration time.Duration
	modes    string
	output   outputValue
}

func newBenchCmd() *cobra.Command {
	o := benchOptions{duration: 3 * time.Second, output: "text"}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure what a context switch costs here: every mode, unpinned and pinned",
		Long: `bench runs each load mode unpinned, with both sides on one CPU, and with one
side on each of two CPUs (when two are allowed), --duration each, then prints
nanoseconds per round trip and per kernel-counted switch, switches per round
trip, the ratio to the unpinned run, and what the figures say.

Goroutine mode runs unpinned only (the Go scheduler places goroutines) and
the syscall baseline, one thread, never on two CPUs.`,
		Example: `  ctxtop bench
  ctxtop bench --modes futex,process --duration 5s
  ctxtop bench -o json | jq '.[] | {mode, cpus, ns_per_round_trip}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.duration <= 0 {
				return fmt.Errorf("--duration must be positive, got %v", o.duration)
			}
			modes := load.Modes()
			if o.modes != "" {
				modes = nil
				for s := range strings.SplitSeq(o.modes, ",") {
					m, err := load.ParseMode(strings.TrimSpace(s))
					if err != nil {
						return fmt.Errorf("--modes: %w", err)
					}
					modes = append(modes, m)
				}
			}
			allowed, err := load.AllowedCPUs()
			if err != nil {
				return err
			}
			return runBench(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), benchPlan(modes, allowed, o.duration), o.output == "json")
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.DurationVar(&o.duration, "duration", o.duration, "how long each run lasts")
	f.StringVar(&o.modes, "modes", "", "comma-separated modes to run (default: all)")
	f.VarP(&o.output, "output", "o", "text, or json: the array of run summaries")
	return cmd
}

// benchPlan is the matrix of runs, in the order the table shows them.
func benchPlan(modes []load.Mode, allowed []int, d time.Duration) []load.Config {
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

func runBench(ctx context.Context, w, progress io.Writer, plan []load.Config, asJSON bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	sums := []load.Summary{}
	for i, cfg := range plan {
		if ctx.Err() != nil {
			break
		}
		if !asJSON {
			fmt.Fprintf(progress, "[%d/%d] %s, %s ...\n", i+1, len(plan), cfg.Mode, pinning(cfg.CPUs))
		}
		run, err := load.Start(cfg)
		if err != nil {
			return fmt.Errorf("%s, %s: %w", cfg.Mode, pinning(cfg.CPUs), err)
		}
		select {
		case <-ctx.Done():
		case <-run.Done():
		}
		sums = append(sums, run.Stop())
	}
	if asJSON {
		b, err := json.Marshal(sums)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	}
	printBench(w, sums)
	return nil
}

func printBench(w io.Writer, sums []load.Summary) {
	fmt.Fprintf(w, "%-10s %-16s %10s %10s %14s %12s\n", "mode", "pinning", "ns/trip", "ns/switch", "switches/trip", "vs unpinned")
	for _, s := range sums {
		nsSwitch := "-"
		if s.SwitchesPerRoundTrip >= 0.5 {
			nsSwitch = group(s.NsPerSwitch)
		}
		ratio := "-"
		if u, ok := findRun(sums, s.Mode, 0); ok && u.NsPerRoundTrip > 0 && s.NsPerRoundTrip > 0 {
			ratio = fmt.Sprintf("%.2f×", s.NsPerRoundTrip/u.NsPerRoundTrip)
		}
		fmt.Fprintf(w, "%-10s %-16s %10s %10s %14.2f %12s\n", s.Mode, pinning(s.CPUs), group(s.NsPerRoundTrip), nsSwitch, s.SwitchesPerRoundTrip, ratio)
	}
	lines := benchConclusions(sums)
	if len(lines) > 0 {
		fmt.Fprintln(w)
	}
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// findRun is the run of mode with ncpus CPUs pinned.
func findRun(sums []load.Summary, mode load.Mode, ncpus int) (load.Summary, bool) {
	for _, s := range sums {
		if s.Mode == mode && len(s.CPUs) == ncpus && s.RoundTrips > 0 {
			return s, true
		}
	}
	return load.Summary{}, false
}

// benchConclusions are sentences computed from the figures, in the words
// of the classic experiments; a comparison whose runs are missing is left
// out.
func benchConclusions(sums []load.Summary) []string {
	var out []string
	for _, m := range []load.Mode{load.ModeFutex, load.ModePipe, load.ModeProcess} {
		u, ok1 := findRun(sums, m, 0)
		one, ok2 := findRun(sums, m, 1)
		if ok1 && ok2 {
			out = append(out, fmt.Sprintf("- pinning both %s sides to one CPU made a round trip %s (%s → %s ns)",
				m, faster(u.NsPerRoundTrip, one.NsPerRoundTrip), group(u.NsPerRoundTrip), group(one.NsPerRoundTrip)))
		}
		two, ok3 := findRun(sums, m, 2)
		if ok2 && ok3 {
			out = append(out, fmt.Sprintf("- with one %s side on each of two CPUs a round trip was %s than on one CPU (%s vs %s ns)",
				m, slower(one.NsPerRoundTrip, two.NsPerRoundTrip), group(two.NsPerRoundTrip), group(one.NsPerRoundTrip)))
		}
	}
	if g, ok := findRun(sums, load.ModeGoroutine, 0); ok {
		if f, ok := findRun(sums, load.ModeFutex, 0); ok {
			out = append(out, fmt.Sprintf("- a goroutine hand-off round trip is %s than an OS thread round trip over futex, unpinned (%s vs %s ns)",
				cheaper(f.NsPerRoundTrip, g.NsPerRoundTrip), group(g.NsPerRoundTrip), group(f.NsPerRoundTrip)))
		}
		if f, ok := findRun(sums, load.ModeFutex, 1); ok {
			out = append(out, fmt.Sprintf("- and %s than the cheapest thread round trip, futex on one CPU (%s ns)",
				cheaper(f.NsPerRoundTrip, g.NsPerRoundTrip), group(f.NsPerRoundTrip)))
		}
	}
	p, ok1 := findRun(sums, load.ModeProcess, 1)
	t, ok2 := findRun(sums, load.ModePipe, 1)
	if ok1 && ok2 && p.NsPerSwitch > 0 && t.NsPerSwitch > 0 {
		out = append(out, fmt.Sprintf("- on one CPU a switch between processes cost %.1f× one between threads (%s vs %s ns per switch)",
			p.NsPerSwitch/t.NsPerSwitch, group(p.NsPerSwitch), group(t.NsPerSwitch)))
	}
	if sc, ok := findRun(sums, load.ModeSyscall, 0); ok {
		if f, ok := findRun(sums, load.ModeFutex, 1); ok && f.NsPerSwitch > 0 && sc.NsPerRoundTrip > 0 {
			out = append(out, fmt.Sprintf("- a system call took %s ns, with %.4f switches each; a futex switch on one CPU costs %.0f system calls",
				group(sc.NsPerRoundTrip), sc.SwitchesPerRoundTrip, f.NsPerSwitch/sc.NsPerRoundTrip))
		}
	}
	return out
}

func faster(before, after float64) string {
	if after <= 0 || before <= 0 {
		return "-"
	}
	if after <= before {
		return fmt.Sprintf("%.1f× faster", before/after)
	}
	return fmt.Sprintf("%.1f× slower", after/before)
}

func slower(base, v float64) string {
	if base <= 0 || v <= 0 {
		return "-"
	}
	if v >= base {
		return fmt.Sprintf("%.1f× slower", v/base)
	}
	return fmt.Sprintf("%.1f× faster", base/v)
}

func cheaper(dear, cheap float64) string {
	if dear <= 0 || cheap <= 0 {
		return "-"
	}
	if cheap <= dear {
		return fmt.Sprintf("%.0f× cheaper", dear/cheap)
	}
	return fmt.Sprintf("%.1f× dearer", cheap/dear)
}
