package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtop/ctxtop/internal/cli/tuiadapt"
	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/output"
	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/tui"
)

type replayOptions struct {
	from, to string
	info     bool
}

func newReplayCmd() *cobra.Command {
	o := options{delay: delayValue(time.Second), output: "text"}
	var ro replayOptions
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Replay a recording in the live monitor, or as batch reports",
		Long: `replay opens a file written by ctxtop record (or ctxtop -b --record) in the
live monitor: every view and key works as live, plus time controls:

  space  play/pause          ←/→  step one sample back/forward
  [ / ]  previous/next spike  { / }  jump a minute back/forward
  1-9    playback speed (1 = as recorded, 9 = nine times faster)
  R      write the HTML report of the window (ctxtop report) here

↑/↓, j/k, PgUp/PgDn still move the selection in the table.

With -b or -o json it prints the reports batch mode printed live.`,
		Example: `  ctxtop replay incident.ctxrec
  ctxtop replay incident.ctxrec --from 10:20 --to 10:25 -b
  ctxtop replay incident.ctxrec -b --from 10:20 --to +5m
  ctxtop replay --info incident.ctxrec`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if ro.info {
				return printInfo(cmd.OutOrStdout(), args[0])
			}
			if err := o.validate(cmd); err != nil {
				return err
			}
			return runReplay(cmd, args[0], o, ro)
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.StringVar(&ro.from, "from", "", "start at this time: 15:04, 15:04:05, RFC 3339, or +5m from the recording's start (before the recording: its first sample)")
	f.StringVar(&ro.to, "to", "", "stop at this time: the same forms, +5m counting from --from")
	f.BoolVar(&ro.info, "info", false, "describe the recording: header, time span, samples, top spikes")
	f.BoolVarP(&o.batch, "batch", "b", false, "print reports instead of opening the monitor")
	f.VarP(&o.output, "output", "o", output.Usage(false))
	f.IntVarP(&o.iterations, "iterations", "n", 0, "print at most this many reports; 0: every one")
	f.IntVar(&o.top, "top", 20, "rows per report in text mode (JSON: all rows unless given)")
	f.BoolVar(&o.processes, "processes", false, "one row per process instead of per thread")
	f.BoolVar(&o.cgroups, "cgroups", false, "one row per cgroup (container, pod, systemd unit), with its CPU throttling")
	f.Float64Var(&o.hot, "hot", 0, "switches/s at which a thread is hot (default: the recording's)")
	f.BoolVar(&o.noColor, "no-color", false, "no colours in the monitor (NO_COLOR is honoured too)")
	completeValues(cmd, "output", output.Names()...)
	return cmd
}

// openPlayer opens a recording, prints what went wrong reading it, and
// marks its samples in the pass that reads it.
func openPlayer(path string, hot float64, stderr io.Writer) (*pipeline.Player, error) {
	r, p, err := openMarked(path, hot, stderr, pipeline.Visit{})
	if r == nil {
		return nil, err
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return p, nil
}

// openMarked is pipeline.OpenPlayer that prints what went wrong reading the
// recording. r comes with an error when the recording has no rate, for a
// caller with something to say first; the caller closes it.
func openMarked(path string, hot float64, stderr io.Writer, v pipeline.Visit) (*record.Recording, *pipeline.Player, error) {
	r, p, err := pipeline.OpenPlayer(path, model.Options{HotThreshold: hot}, v)
	if r == nil {
		return nil, nil, err
	}
	for _, n := range r.Notes {
		fmt.Fprintf(stderr, "ctxtop: %s: %s\n", path, n)
	}
	if n := cpuNote(r.Header); n != "" {
		fmt.Fprintf(stderr, "ctxtop: %s: %s\n", path, n)
	}
	if errors.Is(err, record.ErrEmpty) {
		return r, nil, fmt.Errorf("%s: %w (it needs two samples for one rate)", path, err)
	}
	return r, p, err
}

// openWindow opens a recording and plays the window ro picks once,
// handing each snapshot in it to each: a report's or a comparison's one
// pass. A whole recording is played in the pass that reads it; a window
// is found in the recording read, then played alone. The player's range
// is that window. Its errors name the file, as a comparison of two needs.
func openWindow(path string, ro replayOptions, stderr io.Writer, each func(*model.Snapshot)) (*pipeline.Player, error) {
	if ro.from == "" && ro.to == "" {
		return openVisit(path, stderr, pipeline.Visit{Each: each})
	}
	r, p, err := openMarked(path, 0, stderr, pipeline.Visit{})
	if r == nil {
		return nil, err
	}
	w, werr := parseWindow(r, ro)
	if werr != nil {
		r.Close()
		return nil, fmt.Errorf("%s: %w", path, werr)
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	if err := p.Visit(pipeline.Visit{From: w.from, To: w.to, Each: each}); err != nil {
		r.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := w.apply(p); err != nil {
		r.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// openVisit opens a recording and hands v.Each the snapshots of its
// window as the pass that reads it marks them.
func openVisit(path string, stderr io.Writer, v pipeline.Visit) (*pipeline.Player, error) {
	r, p, err := openMarked(path, 0, stderr, v)
	if r != nil && err != nil {
		r.Close()
	}
	return p, err
}

// cpuNote says when the recording's host differs from this one in a way
// that matters for reading it.
func cpuNote(h record.Header) string {
	if otherCPUs(h) {
		return fmt.Sprintf("recorded on %s with %d CPUs (this host has %d): per-CPU figures are the recording's", h.Facts.Hostname, h.CPUs, runtime.NumCPU())
	}
	return ""
}

func runReplay(cmd *cobra.Command, path string, o options, ro replayOptions) error {
	stderr := cmd.ErrOrStderr()
	// Without --hot, threads are hot where the recorder said they were,
	// whichever command opened the recording.
	if !cmd.Flags().Changed("hot") {
		o.hot = 0
	}
	if !o.batch && !isTerminal(os.Stdout) {
		o.batch = true
	}
	p, err := openPlayer(path, o.hot, stderr)
	if err != nil {
		return err
	}
	if err := applyRange(p, ro); err != nil {
		return err
	}
	if o.output.format().Stacks && !p.HasStacks() {
		// Asked for stacks that are not there: an empty output with
		// exit 0 reads as "nothing blocked".
		return fmt.Errorf("%s: no stacks in this recording for -o %s (record with --stacks)", path, o.output)
	}
	p.FoldStacks(o.output.format().Stacks)
	if o.batch {
		return replayBatch(cmd.OutOrStdout(), p, o, p.Recording().Header.Facts)
	}
	return runReplayTUI(p, o, path)
}

func applyRange(p *pipeline.Player, ro replayOptions) error {
	w, err := parseWindow(p.Recording(), ro)
	if err != nil {
		return err
	}
	return w.apply(p)
}

// window is a --from/--to window of a recording; zero times leave its
// ends open.
type window struct {
	from, to time.Time
	// asked is --from as given, which may be before the recording.
	asked time.Time
	set   bool
}

func parseWindow(r *record.Recording, ro replayOptions) (window, error) {
	if ro.from == "" && ro.to == "" {
		return window{}, nil
	}
	first, last := r.Span()
	from, err := parseWhen(ro.from, first, first, last)
	if err != nil {
		return window{}, fmt.Errorf("--from: %w", err)
	}
	// --to +5m ends five minutes after the --from given, even where the
	// recording starts later.
	base := first
	if !from.IsZero() {
		base = from
	}
	to, err := parseWhen(ro.to, base, first, last)
	if err != nil {
		return window{}, fmt.Errorf("--to: %w", err)
	}
	// A window that opens before the recording opens with it.
	w := window{from: from, to: to, asked: from, set: true}
	if !from.IsZero() && from.Before(first) {
		w.from = first
	}
	return w, nil
}

// apply narrows p to w, or says why it cannot.
func (w window) apply(p *pipeline.Player) error {
	if !w.set {
		return nil
	}
	if !p.SetRange(w.from, w.to) {
		first, last := p.Recording().Span()
		return fmt.Errorf("no samples between %s and %s; the recording spans %s to %s", when(w.asked, first), when(w.to, last),
			first.Format("15:04:05"), last.Format("15:04:05"))
	}
	return nil
}

// when shows a --from/--to time, or the recording's end it stands for.
func when(t, end time.Time) string {
	if t.IsZero() {
		t = end
	}
	return t.Format("15:04:05")
}

// parseWhen reads a --from/--to time: +DURATION after base, an RFC 3339
// time, or a clock time on the recording's first day, or on the next day
// when it is before the start there and the recording reaches it the next
// day (a recording across midnight).
func parseWhen(s string, base, first, last time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if strings.HasPrefix(s, "+") {
		d, err := time.ParseDuration(s[1:])
		if err != nil || d < 0 {
			return time.Time{}, fmt.Errorf("%q: want +DURATION such as +5m", s)
		}
		return base.Add(d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"15:04:05", "15:04"} {
		c, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		y, mo, d := first.Date()
		t := time.Date(y, mo, d, c.Hour(), c.Minute(), c.Second(), c.Nanosecond(), first.Location())
		if next := t.AddDate(0, 0, 1); t.Before(first) && !next.After(last) {
			t = next
		}
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q: want 15:04, 15:04:05, an RFC 3339 time or +5m", s)
}

// replayBatch prints a report per recorded sample, as batch mode did,
// through the loop batch mode samples in, unpaced: each report already
// has its recorded interval.
func replayBatch(w io.Writer, p *pipeline.Player, o options, facts hostinfo.Facts) error {
	write, _ := reportWriter(w, o, func() hostinfo.Facts { return facts })
	err := pipeline.Run(context.Background(), 0, o.iterations, func() error {
		snap, err := p.Next()
		if err != nil {
			return err
		}
		return write(&snap)
	})
	if errors.Is(err, pipeline.ErrEnd) {
		return nil
	}
	return err
}

// spikeEvent is a run of consecutive samples the model marked as spikes
// (model.SpikeRuns), with its peak.
type spikeEvent struct {
	start, peakAt time.Time
	samples       int
	peak          pipeline.Mark
}

func spikeEvents(marks []pipeline.Mark) []spikeEvent {
	runs := model.SpikeRuns(len(marks), func(i int) bool { return marks[i].Rate && marks[i].Spike.Active })
	ev := make([]spikeEvent, 0, len(runs))
	for _, r := range runs {
		e := spikeEvent{start: marks[r.First].Time, samples: r.Last - r.First + 1}
		for i := r.First; i <= r.Last; i++ {
			if m := marks[i]; i == r.First || m.CSPerSec > e.peak.CSPerSec {
				e.peak, e.peakAt = m, m.Time
			}
		}
		ev = append(ev, e)
	}
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].peak.CSPerSec > ev[j].peak.CSPerSec })
	return ev
}

// printInfo answers "when did it happen and who was it" in one screen.
func printInfo(w io.Writer, path string) error {
	// Marked in the pass that reads the file: the spikes come from the
	// marks.
	r, p, err := pipeline.OpenPlayer(path, model.Options{}, pipeline.Visit{})
	if r == nil {
		return err
	}
	defer r.Close()
	h := r.Header
	pids := "all"
	if len(h.PIDs) > 0 {
		pids = fmt.Sprint(h.PIDs)
	}
	fmt.Fprintf(w, "file       %s (%s, format %d, part %d)\n", path, format.Bytes(r.Size), h.Version, h.Part)
	fmt.Fprintf(w, "host       %s, kernel %s, %d CPUs\n", h.Facts.Hostname, h.Facts.Kernel, h.CPUs)
	fmt.Fprintf(w, "recorder   ctxtop %s, every %s, procfs %s, processes %s, hot at %s/s\n",
		h.CtxtopVersion, h.Interval, h.ProcRoot, pids, format.Thousands(h.HotThreshold))
	first, last := r.Span()
	if r.Samples() == 0 {
		fmt.Fprintf(w, "span       no samples\n")
	} else {
		fmt.Fprintf(w, "span       %s to %s (%s), %d samples\n", first.Format("2006-01-02 15:04:05 MST"),
			last.Format("15:04:05"), last.Sub(first).Round(time.Second), r.Samples())
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note       %s\n", n)
	}
	if n := cpuNote(h); n != "" {
		fmt.Fprintf(w, "note       %s\n", n)
	}
	if p == nil {
		return nil
	}
	ev := spikeEvents(p.Marks())
	if len(ev) == 0 {
		fmt.Fprintln(w, "spikes     none")
		return nil
	}
	fmt.Fprintf(w, "spikes     %d; the largest:\n", len(ev))
	for i, e := range ev {
		if i == 5 {
			break
		}
		m := e.peak
		n := fmt.Sprintf("%d samples from %s", e.samples, e.start.Format("15:04:05"))
		if e.samples == 1 {
			n = "1 sample"
		}
		fmt.Fprintf(w, "  %s  cs/s %s, %s, %s", e.peakAt.Format("15:04:05"), format.Thousands(m.CSPerSec), format.SpikeReason(m.Spike), n)
		if m.TopComm != "" {
			fmt.Fprintf(w, "; top: %s %d/%d %s/s", m.TopComm, m.TopPID, m.TopTID, format.Thousands(m.TopPerSec))
		}
		fmt.Fprintln(w)
	}
	return nil
}

// otherCPUs says whether the recording's host had another CPU count than
// this one.
func otherCPUs(h record.Header) bool { return h.CPUs > 0 && h.CPUs != runtime.NumCPU() }

// replayNote is the first thing the monitor says over a recording: what
// was lost and whether its host differs, in short.
func replayNote(r *record.Recording) string {
	var parts []string
	if r.Lost > 0 {
		parts = append(parts, fmt.Sprintf("%d samples lost to damage", r.Lost))
	}
	if otherCPUs(r.Header) {
		parts = append(parts, fmt.Sprintf("recorded with %d CPUs, this host has %d", r.Header.CPUs, runtime.NumCPU()))
	}
	return strings.Join(parts, "; ")
}

func runReplayTUI(p *pipeline.Player, o options, path string) error {
	r := p.Recording()
	lo, hi := p.Range()
	from, to := p.Marks()[lo].Time, p.Marks()[hi].Time
	report := func() (string, error) { return reportFile(path, from, to) }
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	return tui.Run(tui.Options{
		Replay: tuiadapt.PlayerReplay(p, r.Header.Facts, replayNote(r), report),
		// No Load: a load runs on this host, and its live figures
		// would mix with the recorded ones.
		Interval:     r.Header.Interval,
		HotThreshold: o.hot,
		NoColor:      o.noColor,
		Version:      version,
	})
}
