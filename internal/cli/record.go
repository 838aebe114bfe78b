package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/load"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/sampler"
)

type recordOptions struct {
	out      string
	delay    delayValue
	duration durationValue
	maxSize  sizeValue
	rotate   int
	pids     pidListValue
	procRoot string
	hostRoot string
	// cgroupRoot is the host root's cgroup file system, when --host-root
	// has one.
	cgroupRoot string
	hot        float64
	info       string
	flush      durationValue
	wakeups    bool
	stacks     bool
	// jvmPerfMap asks the -p processes that are JVMs for a perf map.
	jvmPerfMap bool
	stackBytes int
	force      bool
}

func newRecordCmd() *cobra.Command {
	o := recordOptions{delay: delayValue(time.Second), procRoot: "/proc", hot: model.DefaultHotThreshold, flush: durationValue(record.DefaultFlushEvery)}
	cmd := &cobra.Command{
		Use:   "record -o FILE|-",
		Short: "Record raw samples to a file, to replay later with ctxtop replay",
		Long: `record writes the sampler's raw counters to FILE every interval, until
interrupted, --duration passes or the file reaches --max-size. Only what
changed is written, so an hour of a busy host fits in a few MB; copy the
file anywhere and open it with ctxtop replay.

The file is written in checksummed chunks at least every --flush: a
recorder killed, or stopped by a full disk, leaves a file that replays up
to its last complete chunk.

-o - writes the recording to stdout (a pipe, or ssh host ctxtop record -o -
> incident.ctxrec), in the same whole chunks: a stream cut anywhere replays
up to its last whole chunk. It cannot --rotate, and stdout must not be a
terminal.

--duration D is the time the rates cover: recording stops at the first
sample at least D after the first one, the baseline the first rates are
computed from. At -d I that is D/I intervals (rounded up) and D/I+1
samples: --duration 4 -d 0.5 records 9 samples and 4 s of rates, and a D
shorter than I one interval (two samples, the least a replay shows).

An existing FILE (or FILE.1 ... with --rotate) is refused unless --force
says to replace it; --force replaces only a regular file or a symbolic
link (the link, never written through), never a device, FIFO, socket or
directory.`,
		Example: `  ctxtop record -o incident.ctxrec                  until Ctrl-C
  ctxtop record -o day.ctxrec --duration 24h
  ctxtop record -o - --duration 10m > incident.ctxrec   to stdout, as over ssh host
  ctxtop record -o ring.ctxrec --max-size 20MB --rotate 5   a flight recorder
  ctxtop record --info incident.ctxrec               when it happened, and who`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.info != "" {
				return printInfo(cmd.OutOrStdout(), o.info)
			}
			if o.out == "" {
				return errors.New("record needs -o FILE, or -o - for stdout (or --info FILE to describe one)")
			}
			if err := checkStackBytes(o.stackBytes); err != nil {
				return err
			}
			if o.rotate < 0 {
				return fmt.Errorf("--rotate must not be negative, got %d", o.rotate)
			}
			if o.rotate > 0 && o.out == "-" {
				return errors.New("--rotate keeps files, and -o - is one stream to stdout: record to -o FILE to rotate")
			}
			if o.rotate > 0 && o.maxSize == 0 {
				return errors.New("--rotate needs --max-size: the size at which to start the next file")
			}
			if o.out == "-" && isTerminal(os.Stdout) {
				return errors.New("-o - writes a binary recording to stdout, which is a terminal: redirect it (-o - > FILE) or pipe it")
			}
			if time.Duration(o.flush) < time.Duration(o.delay) {
				o.flush = durationValue(o.delay)
			}
			if !(o.hot > 0) {
				return fmt.Errorf("--hot must be a positive rate, got %v", o.hot)
			}
			if o.jvmPerfMap && (!o.stacks || len(o.pids) == 0) {
				return errors.New("--jvm-perfmap asks the -p processes that are JVMs for perf maps: give it with --stacks and -p PID")
			}
			if err := applyHostRoot(cmd, o.hostRoot, &o.procRoot, &o.cgroupRoot); err != nil {
				return err
			}
			return runRecord(cmd.Context(), cmd.ErrOrStderr(), o)
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.StringVarP(&o.out, "output", "o", "", "file to write, or - for stdout")
	f.VarP(&o.delay, "delay", "d", "sampling interval: seconds (0.5) or a duration (500ms)")
	f.Var(&o.duration, "duration", "stop once the rates cover this long: seconds or a duration; at -d I, D/I intervals rounded up, D/I+1 samples with the baseline (default: until interrupted)")
	f.Var(&o.maxSize, "max-size", "stop (or rotate) before the file passes this size: 20MB, 512KB (powers of 1024) (default: no limit)")
	f.IntVar(&o.rotate, "rotate", 0, "at --max-size keep this many files (FILE, FILE.1, ...), dropping the oldest")
	f.VarP(&o.pids, "pid", "p", "only these processes, comma-separated PIDs")
	f.StringVar(&o.procRoot, "proc", "/proc", "procfs root to read")
	f.StringVar(&o.hostRoot, "host-root", "", hostRootHelp)
	f.Float64Var(&o.hot, "hot", model.DefaultHotThreshold, "switches/s at which a thread is hot, kept for the replay")
	f.Var(&o.flush, "flush", "write a chunk to the file at least this often: what a crash can lose")
	f.StringVar(&o.info, "info", "", "describe a recording instead: header, time span, samples, top spikes")
	f.BoolVar(&o.force, "force", false, "replace FILE (and FILE.1 ... with --rotate) if it is a regular file or a symbolic link")
	f.BoolVar(&o.wakeups, "wakeups", false, "also record who wakes whom (eBPF; needs root or CAP_BPF+CAP_PERFMON and kernel BTF), for replay's W view and JSON wakeups")
	stackBytesFlag(f, &o.stackBytes)
	f.BoolVar(&o.stacks, "stacks", false, "also record where hot threads (all threads of -p processes) block and are woken from, symbolized (eBPF stacks; needs root or CAP_BPF+CAP_PERFMON and kernel BTF), for replay's detail view, WHY, JSON blocked_at/woken_from and -o folded")
	f.BoolVar(&o.jvmPerfMap, "jvm-perfmap", false, "with --stacks -p: ask each of the processes that is a HotSpot JVM (JDK 17+) for a perf map naming its JIT-compiled methods, once at start")
	return cmd
}

// recordHeader describes this host and run.
// The host facts are the ones batch JSON and the monitor's header show.
func recordHeader(root string, pids []int, interval time.Duration, hot float64) record.Header {
	f := hostinfo.Read(context.Background(), root)
	now := time.Now()
	zone, off := now.Zone()
	return record.Header{
		Facts: f, CtxtopVersion: version, Interval: interval,
		ProcRoot: root, PIDs: pids, HotThreshold: hot, Start: now, ZoneName: zone, ZoneOffset: off,
	}
}

func runRecord(ctx context.Context, stderr io.Writer, o recordOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	interval := time.Duration(o.delay)
	spec := recordSpec{path: o.out, pids: o.pids, procRoot: o.procRoot, interval: interval, hot: o.hot,
		rotate: o.rotate, force: o.force, writer: record.WriterOptions{MaxSize: int64(o.maxSize), FlushEvery: time.Duration(o.flush)}}
	if o.out == "-" {
		spec.stream = os.Stdout
	}
	cfg := pipeline.LiveConfig{
		Sampler: sampler.Config{Root: o.procRoot, PIDs: o.pids, HotThreshold: o.hot, HostRoot: o.hostRoot, CgroupRoot: o.cgroupRoot,
			Passes: durationPasses(time.Duration(o.duration), interval)},
		Interval: interval,
	}
	tr := openTracers(stderr, tracerWants{wakeups: o.wakeups, stacks: o.stacks, stackBytes: o.stackBytes, proc: o.procRoot, pids: o.pids})
	defer tr.Close()
	if tr.wakeups != nil {
		cfg.Wakeups = tr.wakeups
	}
	if tr.stacks != nil {
		cfg.Stacks = tr.stacks
	}
	src, mr, err := openRecordingLive(cfg, spec)
	if err != nil {
		if mr.rec != nil {
			return recordStop(err, mr.rec, o, func(why string) error { return mr.done(stderr, o, why) })
		}
		return err
	}
	defer src.Close()
	warnSkipped(stderr, src.Skipped())
	if o.stacks {
		sayJVMs(stderr, o.procRoot, o.pids, o.jvmPerfMap, tr.stacks)
	}
	done := func(why string) error { return mr.done(stderr, o, why) }
	// The snapshots are thrown away: what is kept is the samples behind
	// them, wait looks included, as --record keeps them.
	// --duration is the time the rates cover: the recording ends with
	// the first sample at least that long after the baseline, on the
	// samples' own clock. A timer would race the sample due at the very
	// end (and lose it, a whole interval, as often as not); loading the
	// tracers' programs before the baseline is not part of it either.
	err = pipeline.Run(ctx, interval, 0, func() error {
		if _, err := src.Next(); err != nil {
			return err
		}
		if d := time.Duration(o.duration); d > 0 && mr.rec.Last().Sub(mr.rec.First()) >= d {
			return errDuration
		}
		return nil
	})
	switch {
	case errors.Is(err, sampler.ErrTargetsGone):
		return done("every process given with --pid has exited")
	case errors.Is(err, errDuration):
		return done("stopped after --duration " + o.duration.String())
	case err != nil:
		return recordStop(err, mr.rec, o, done)
	}
	return done("stopped by a signal")
}

// errDuration ends a recording at --duration.
var errDuration = errors.New("--duration reached")

// done closes the file and says what it holds and why it ended.
func (m *monitorRecorder) done(stderr io.Writer, o recordOptions, why string) error {
	rec := m.rec
	if err := rec.Close(); err != nil {
		return diskError(err, rec)
	}
	if n := rec.Samples(); n < 2 {
		// One sample has no rate: nothing a replay could show.
		return fmt.Errorf("%s holds only %d sample, and a replay needs two (%s; -d is %s)", rec.Path(), n, why, o.delay.String())
	}
	took := time.Since(m.start).Round(time.Second)
	msg := fmt.Sprintf("ctxtop: recorded %d samples to %s (%s) in %s; %s", rec.Samples(), rec.Path(),
		format.Bytes(rec.Size()), took, why)
	if rec.Rotations > 0 {
		// The samples of the parts dropped from the ring are not in any
		// file: say what the files left hold.
		kept, newest := rec.Kept()
		files := min(rec.Rotations+1, o.rotate)
		msg = fmt.Sprintf("ctxtop: recorded %d samples in %s; %s; %d rotations: %s holds the last %d (%s)", rec.Samples(),
			took, why, rec.Rotations, rec.Path(), newest, format.Bytes(rec.Size()))
		if files > 1 {
			msg += fmt.Sprintf(", and with %s it keeps the last %d", partRange(rec.Path(), files-1), kept)
		}
	}
	if rec.Dropped > 0 {
		msg += fmt.Sprintf("; the last %d samples before a cap did not fit", rec.Dropped)
	}
	fmt.Fprintln(stderr, msg)
	return nil
}

// recordStop ends a recording on an error: at --max-size a normal end,
// a failed write one line saying how much of the file replays, and any
// other error (the sampler's) as it is.
func recordStop(err error, rec *record.FileRecorder, o recordOptions, done func(string) error) error {
	if ce := (*record.CapError)(nil); errors.As(err, &ce) {
		rec.Close()
		return capError(ce)
	}
	if errors.Is(err, record.ErrSizeLimit) {
		return done("stopped at --max-size " + o.maxSize.String())
	}
	if isRecordError(err) {
		return diskError(errors.Unwrap(err), rec)
	}
	rec.Close()
	return err
}

// capError says which --max-size would work, from the sizes of this
// host's own samples.
func capError(ce *record.CapError) error {
	if ce.Kept == 0 {
		return fmt.Errorf("--max-size %s is too small: the header and first sample alone take %s on this host, and a replay needs a second; give more than that",
			format.Bytes(ce.MaxSize), exactSize(ce.Need))
	}
	return fmt.Errorf("--max-size %s holds one sample only: a replay needs two, and the first two take %s with the header on this host; give at least that",
		format.Bytes(ce.MaxSize), exactSize(ce.Need))
}

// exactSize is a size to give back as a flag: rounded, with the bytes
// when the rounding hides them.
func exactSize(n int64) string {
	if n < 1<<10 {
		return format.Bytes(n)
	}
	return fmt.Sprintf("%s (%d B)", format.Bytes(n), n)
}

// partRange names the older parts of a ring: FILE.1, or FILE.1 to FILE.n.
func partRange(path string, n int) string {
	if n == 1 {
		return path + ".1"
	}
	return fmt.Sprintf("%s.1 to %s.%d", path, path, n)
}

// createError adds the flag that replaces an existing file to the error
// that refused it.
func createError(err error, force string) error {
	if ce := (*record.CapError)(nil); errors.As(err, &ce) {
		return capError(ce)
	}
	if errors.Is(err, record.ErrExists) {
		return fmt.Errorf("%w; %s replaces it", err, force)
	}
	if errors.Is(err, record.ErrNotFile) {
		return fmt.Errorf("%w; a recording replaces only a regular file or a symbolic link, %s or not", err, force)
	}
	return err
}

// diskError is the one line a failed write gets: what failed, and that the
// file is still good up to the last sample that made it.
func diskError(err error, rec *record.FileRecorder) error {
	rec.Close()
	if rec.Streamed() {
		return fmt.Errorf("%v; what reached stdout replays up to its last whole chunk", err)
	}
	// Read back what made it: the last chunk may not have.
	upTo := ""
	if r, rerr := record.Open(rec.Path()); rerr == nil {
		if _, last := r.Span(); r.Samples() > 0 {
			upTo = fmt.Sprintf(" up to %s (%d samples)", last.Format("15:04:05"), r.Samples())
		}
		r.Close()
	}
	return fmt.Errorf("%v; the file replays%s", err, upTo)
}

// sizeValue is a byte count as load sizes are written: 2097152, 512K,
// 20MB, 1GiB (powers of 1024).
type sizeValue int64

// String is "0" for no limit, which help then shows as no default: a
// default of "0 B" reads as a cap --max-size refuses.
func (v *sizeValue) String() string {
	if *v == 0 {
		return "0"
	}
	return format.Bytes(int64(*v))
}
func (v *sizeValue) Type() string { return "size" }

func (v *sizeValue) Set(s string) error {
	n, err := load.ParseSize(s)
	if err == nil && n == 0 {
		// A size, but no cap: "not a size" would send the user looking
		// for another spelling of nothing.
		return errors.New("0 is no cap: leave the flag out for no limit, or give one (20MB, 512KB)")
	}
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a size (20MB, 512KB, 1048576)", s)
	}
	*v = sizeValue(n)
	return nil
}

// monitorRecorder keeps a live source's samples in a recording: ctxtop
// record, and --record of the monitor and batch mode.
type monitorRecorder struct {
	rec   *record.FileRecorder
	start time.Time
}

// recordSpec is the recording a live source writes.
type recordSpec struct {
	path     string
	pids     []int
	procRoot string
	interval time.Duration
	hot      float64
	rotate   int
	force    bool
	writer   record.WriterOptions
	// stream, when set, takes the recording instead of a file at path.
	stream *os.File
}

// plannedPasses is how many passes a run means to make, the baseline
// included: batch mode's -n reports and the one before them; 0, as many
// as it lasts, for the monitor and a batch run until interrupted. A run
// that stays has the task walk's skipping program loaded at its start,
// so that no pass after the first pays for it.
func plannedPasses(batch bool, iterations int) int {
	if !batch || iterations <= 0 {
		return 0
	}
	return iterations + 1
}

// durationPasses is plannedPasses for a run of duration d (0: until
// interrupted) at interval.
func durationPasses(d, interval time.Duration) int {
	if d <= 0 || interval <= 0 {
		return 0
	}
	return int(min(d/interval, 1<<20)) + 1
}

// openLive is the live source of the monitor and batch mode, writing its
// samples to o.recordTo when set.
func openLive(o options, wakeups pipeline.WakeupReader, stackReader pipeline.StacksReader) (*pipeline.Live, *monitorRecorder, error) {
	defer sampler.QuietStartGC()()
	cfg := pipeline.LiveConfig{
		Sampler: sampler.Config{Root: o.procRoot, PIDs: o.pids, HotThreshold: o.hot, CgroupRoot: o.cgroupRoot, HostRoot: o.hostRoot,
			Passes: plannedPasses(o.batch, o.iterations)},
		Interval: time.Duration(o.delay),
		Wakeups:  wakeups,
		Stacks:   stackReader,
		// Collapsed stacks are the interval's, kept only for -o folded.
		FoldedStacks: o.output.format().Stacks,
		// Reports, unlike a screen that refreshes on, must hold stacks
		// from the first: -o folded -n 1 was empty.
		TargetStacksFirst: o.batch,
	}
	if o.recordTo == "" {
		l, err := pipeline.NewLive(cfg)
		return l, nil, err
	}
	l, mr, err := openRecordingLive(cfg, recordSpec{path: o.recordTo, pids: o.pids, procRoot: o.procRoot, interval: time.Duration(o.delay), hot: o.hot, force: o.force})
	if err != nil {
		if isRecordError(err) {
			return nil, nil, mr.explain(err)
		}
		if mr.rec != nil {
			mr.rec.Close()
		}
		return nil, nil, err
	}
	return l, mr, nil
}

// openRecordingLive is a live source whose every sample, the baseline
// first, goes to the recording spec describes; the file is created with
// the first sample, which gives its CPU count. Write errors come back
// from Next as a recordError.
func openRecordingLive(cfg pipeline.LiveConfig, spec recordSpec) (*pipeline.Live, *monitorRecorder, error) {
	// A file size limit (ulimit -f) must end in an error we can report,
	// not a signal that kills us mid-chunk.
	signal.Ignore(syscall.SIGXFSZ)
	mr := &monitorRecorder{}
	cfg.Record = func(s *model.Sample) error {
		if mr.rec == nil {
			h := recordHeader(spec.procRoot, spec.pids, spec.interval, spec.hot)
			h.CPUs = s.System.CPUs
			fo := record.FileOptions{Path: spec.path, Header: h, Rotate: spec.rotate, Overwrite: spec.force, Writer: spec.writer}
			if spec.stream != nil {
				fo.Path, fo.Stream = "stdout", spec.stream
			}
			rec, err := record.Create(fo)
			if ce := (*record.CapError)(nil); errors.As(err, &ce) && ce.Kept == 0 {
				// The header alone did not fit: measure the first
				// sample too, for the size that would.
				if n, ferr := record.FirstSize(h, s, spec.writer); ferr == nil {
					ce.Need = n
				}
			}
			if err != nil {
				return createError(err, "--force")
			}
			mr.rec, mr.start = rec, time.Now()
		}
		if err := mr.rec.Write(s); err != nil {
			return recordError{err}
		}
		return nil
	}
	l, err := pipeline.NewLive(cfg)
	return l, mr, err
}

// recordError is a failed write to the --record file, which closed it:
// the monitor stops on it rather than sample on without recording.
type recordError struct{ error }

func (e recordError) Unwrap() error { return e.error }

func isRecordError(err error) bool { return errors.As(err, new(recordError)) }

func (m *monitorRecorder) close() error {
	if m == nil || m.rec == nil {
		return nil
	}
	return m.rec.Close()
}

// explain names the recording in an error of writing it; other errors
// pass as they are.
func (m *monitorRecorder) explain(err error) error {
	if m == nil || m.rec == nil || !isRecordError(err) {
		return err
	}
	return fmt.Errorf("--record: %w", diskError(errors.Unwrap(err), m.rec))
}
