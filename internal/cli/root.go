// Package cli holds ctxtop's cobra commands; each turns flags into an option
// struct and hands it to the package that does the work.
package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/output"
)

// Stamped by the Makefile with -ldflags.
var (
	version = "dev"
	commit  = "unknown"
)

// errSilent marks an error whose message was already printed.
var errSilent = errors.New("")

// Execute runs the command line and exits non-zero with a one-line message on error.
func Execute() {
	cmd := newRootCmd()
	if err := cmd.Execute(); err != nil {
		if !errors.Is(err, errSilent) {
			fmt.Fprintln(os.Stderr, "ctxtop: "+err.Error())
		}
		os.Exit(1)
	}
}

// RootCommand is ctxtop's command tree, for tools that document it (the man
// pages are generated at install time, outside the shipped binary).
func RootCommand() *cobra.Command { return newRootCmd() }

// Version is the version the binary (or tool) was stamped with.
func Version() string { return version }

// options are the root command's flags: shared by batch mode and the TUI.
type options struct {
	batch      bool
	delay      delayValue
	iterations int
	pids       pidListValue
	top        int
	processes  bool
	cgroups    bool
	hot        float64
	procRoot   string
	cgroupRoot string
	hostRoot   string
	output     outputValue
	noColor    bool
	wakeups    bool
	stacks     bool
	// jvmPerfMap asks the -p processes that are JVMs for a perf map.
	jvmPerfMap bool
	stackBytes int
	// recordTo keeps the samples behind the reports in a recording;
	// replayFrom reads samples from one instead of /proc.
	recordTo   string
	replayFrom string
	// force replaces an existing --record file.
	force bool
	// hidepid is the live --proc mount's hidepid mode when it hides other
	// users' processes from this user (hidepidMode); "" otherwise and in
	// a replay.
	hidepid string
	// noConfig neither reads nor writes the live monitor's settings;
	// delayGiven and viewGiven say -d and --processes/--cgroups were on
	// the command line, which overrides the settings.
	noConfig              bool
	delayGiven, viewGiven bool
}

func newRootCmd() *cobra.Command {
	o := options{delay: delayValue(time.Second), hot: model.DefaultHotThreshold, procRoot: "/proc", output: "text"}
	root := &cobra.Command{
		Use:   "ctxtop",
		Short: "A top for Linux context switches",
		Long: `ctxtop shows which threads are switching: system-wide context switches,
interrupts and rescheduling IPIs per second, and per-thread voluntary and
involuntary switches per second, with hot threads explained.

With a terminal it opens the live monitor; with -b, or when stdout is not a
terminal, it prints reports like pidstat -w -t.`,
		Example: `  ctxtop                      live monitor
  ctxtop -b -d 1 -n 5         five text reports, one second apart
  ctxtop -b -o json | jq .    JSON lines
  ctxtop -p 1234,5678         only these processes
  ctxtop load --cpus 0        ping-pong two threads pinned to CPU 0
  ctxtop bench                what a switch costs on this machine`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if v, _ := cmd.Flags().GetBool("version"); v {
				fmt.Fprintln(cmd.OutOrStdout(), versionLine(version, commit, goVersion()))
				return nil
			}
			if err := o.validate(cmd); err != nil {
				return err
			}
			if !o.batch && !isTerminal(os.Stdout) {
				fmt.Fprintln(os.Stderr, "ctxtop: stdout is not a terminal; printing batch reports (-b)")
				o.batch = true
			}
			if o.jvmPerfMap && !o.batch {
				return errors.New("--jvm-perfmap is for batch reports; in the monitor, J in a JVM thread's detail view asks it for a perf map")
			}
			if o.replayFrom != "" {
				return runReplay(cmd, o.replayFrom, o, replayOptions{})
			}
			if o.batch {
				return runBatch(cmd.Context(), cmd.OutOrStdout(), o)
			}
			return runTUI(o, 0)
		},
	}
	root.SetFlagErrorFunc(flagError)
	f := root.Flags()
	f.SortFlags = false
	f.BoolVarP(&o.batch, "batch", "b", false, "batch mode: print reports instead of the live monitor")
	f.VarP(&o.delay, "delay", "d", "refresh interval: seconds (0.5) or a duration (500ms)")
	f.IntVarP(&o.iterations, "iterations", "n", 0, "number of reports to print, then exit; 0: until interrupted")
	f.VarP(&o.pids, "pid", "p", "only these processes, comma-separated PIDs")
	f.IntVar(&o.top, "top", 20, "rows per report in text mode (JSON: all rows unless given)")
	f.BoolVar(&o.processes, "processes", false, "one row per process (the sum over its threads) instead of per thread")
	f.BoolVar(&o.cgroups, "cgroups", false, "one row per cgroup (container, pod, systemd unit), with its CPU throttling")
	f.Float64Var(&o.hot, "hot", model.DefaultHotThreshold, "switches/s at which a thread is hot")
	f.StringVar(&o.procRoot, "proc", "/proc", "procfs root to read")
	f.StringVar(&o.hostRoot, "host-root", "", hostRootHelp)
	f.StringVar(&o.cgroupRoot, "cgroup-root", "", "cgroup file system root, laid out like /sys/fs/cgroup (default: found in the procfs root's self/mountinfo)")
	f.VarP(&o.output, "output", "o", output.Usage(true))
	f.BoolVar(&o.noColor, "no-color", false, "no colours in the live monitor (NO_COLOR is honoured too)")
	f.BoolVar(&o.wakeups, "wakeups", false, "batch: add who wakes whom (eBPF; needs root or CAP_BPF+CAP_PERFMON and kernel BTF)")
	f.BoolVar(&o.stacks, "stacks", false, "where hot threads (all threads of -p processes) block and where their wakers wake them (eBPF stacks; needs root or CAP_BPF+CAP_PERFMON); the TUI's detail view shows them anyway")
	f.BoolVar(&o.jvmPerfMap, "jvm-perfmap", false, "with --stacks -p: ask each of the processes that is a HotSpot JVM (JDK 17+) for a perf map naming its JIT-compiled methods, once at start (as jcmd PID Compiler.perfmap does)")
	stackBytesFlag(f, &o.stackBytes)
	f.StringVar(&o.recordTo, "record", "", "also write the samples behind the reports to this recording")
	f.BoolVar(&o.force, "force", false, "replace the --record file if it is a regular file or a symbolic link")
	f.StringVar(&o.replayFrom, "replay", "", "read samples from this recording instead of procfs")
	f.BoolVar(&o.noConfig, "no-config", false, "live monitor: neither read nor write the saved view (sort, rows, tree, interval, filter in $XDG_CONFIG_HOME/ctxtop/)")
	completeValues(root, "output", output.Names()...)
	// --version prints what `ctxtop version` does, without the host. Not
	// through cobra's Version: its version template is a text/template,
	// whose reflection keeps every exported method in the binary (3 MB).
	f.Bool("version", false, "print the version and exit")
	root.AddCommand(newVersionCmd(), newLoadCmd(), newBenchCmd(), newLoadChildCmd(), newDemoCmd(), newServeCmd(), newRecordCmd(), newReplayCmd(), newReportCmd(), newDiffCmd())
	return root
}

func (o *options) validate(cmd *cobra.Command) error {
	o.delayGiven = cmd.Flags().Changed("delay")
	o.viewGiven = cmd.Flags().Changed("processes") || cmd.Flags().Changed("cgroups")
	if o.iterations < 0 {
		return fmt.Errorf("-n/--iterations must be 0 (until interrupted) or more, got %d", o.iterations)
	}
	if o.top < 0 {
		return fmt.Errorf("--top must be 0 (all rows) or more, got %d", o.top)
	}
	if o.output.format().AllRows && !cmd.Flags().Changed("top") {
		o.top = 0
	}
	if o.cgroups && o.processes {
		return errors.New("--cgroups and --processes are two row kinds: give one")
	}
	if o.cgroupRoot != "" {
		if fi, err := os.Stat(o.cgroupRoot); err != nil || !fi.IsDir() {
			return fmt.Errorf("--cgroup-root %q is not a directory", o.cgroupRoot)
		}
	}
	if err := applyHostRoot(cmd, o.hostRoot, &o.procRoot, &o.cgroupRoot); err != nil {
		return err
	}
	// Checked only when given: replay's default, 0, is the recording's own.
	if cmd.Flags().Changed("hot") && !(o.hot > 0) {
		return fmt.Errorf("--hot must be a positive rate, got %v", o.hot)
	}
	if err := checkStackBytes(o.stackBytes); err != nil {
		return err
	}
	if o.output.format().Batch {
		o.batch = true
	}
	// Collapsed stacks are what --stacks captures.
	if o.output.format().Stacks {
		o.stacks = true
	}
	if o.jvmPerfMap && (!o.stacks || len(o.pids) == 0 || o.replayFrom != "") {
		return errors.New("--jvm-perfmap asks the -p processes that are JVMs for perf maps: give it with --stacks and -p PID, live")
	}
	if o.recordTo != "" && o.replayFrom != "" {
		return errors.New("--record and --replay do not go together")
	}
	if o.recordTo == "-" {
		// The reports (or the monitor) have stdout; a recording mixed
		// into them would be neither.
		return errors.New("--record - would put the recording on stdout with the reports: give --record FILE, or stream one alone with ctxtop record -o -")
	}
	if o.force && o.recordTo == "" {
		return errors.New("--force replaces the --record file: give --record FILE")
	}
	if _, ok := os.LookupEnv("NO_COLOR"); ok {
		o.noColor = true
	}
	return nil
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print version, commit and Go version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), versionLine(version, commit, goVersion()))
		},
		PostRun: func(cmd *cobra.Command, args []string) {
			printHostFacts(cmd, args)
			printTaskSource(cmd)
		},
	}
}

// versionLine names the commit once. The Makefile stamps git describe's
// version, which already holds it: "abc1234" or "abc1234-dirty" on an
// untagged tree, "v1.2-3-gabc1234" past a tag.
func versionLine(version, commit, goVersion string) string {
	switch {
	case commit == "" || commit == "unknown":
		return fmt.Sprintf("ctxtop %s (commit unknown, %s)", version, goVersion)
	case strings.HasPrefix(version, commit):
		return fmt.Sprintf("ctxtop commit %s (%s)", version, goVersion)
	case strings.Contains(version, commit):
		return fmt.Sprintf("ctxtop %s (%s)", version, goVersion)
	}
	return fmt.Sprintf("ctxtop %s (commit %s, %s)", version, commit, goVersion)
}
