// Package pipeline is the one road from raw samples to what every screen,
// report, recording and exporter shows:
//
//	sources:  Live (the sampler's passes, wait looks, tracer reads)
//	          | Player (a recording's raw samples, record.Cursor)
//	          | Scrapes (a pass when a scraper asks, never a wait)
//	interval: core.interval, the one order every Snapshot is made in:
//	          looks → tracer reads → derive → judge → stack window → retarget
//	loop:     Run over pace.Pacer, one pacing for every mode (missed ticks
//	          skipped, never two samples closer than MinInterval)
//	sinks:    the TUI, batch text, JSON and folded stacks, the record writer,
//	          the exporter (each pass's raw Sample and the Snapshot it ends)
//
// Each guarantee lives in one place here: a rate is never taken over less
// than half the interval (MinInterval, used by the pacing and by both
// sources), live and replay make a Snapshot by the same interval, and the
// spike rule runs only there.
package pipeline

import (
	"slices"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pace"
	"github.com/ctxtop/ctxtop/internal/waitreason"
)

// SpikeWindow is how far back the spike rule looks for the usual level.
const SpikeWindow = 5 * time.Minute

// MinInterval is the shortest interval a rate is taken over for a
// nominal refresh interval (pace.MinInterval): the pipeline's guarantee,
// said where its callers look for it.
func MinInterval(nominal time.Duration) time.Duration { return pace.MinInterval(nominal) }

// core derives Snapshots from consecutive samples. It holds the one
// piece of state the model needs across intervals, the spike detector's
// recent history; everything else is a pure function of the two samples.
type core struct {
	opts   model.Options
	min    time.Duration
	spikes *model.SpikeDetector
	pids   []int
	// stacks is the stack tracer's last reads, which the shares of a
	// thread's stacks are over.
	stacks *model.StackWindow
	// steppedBack is the Time of the last sample whose host-wide counters
	// stepped back from the sample before it: the interval it begins has
	// no host-wide rates either (model.StepsBack).
	steppedBack time.Time
}

// setPIDs limits the wake-up graph to pairs one of these processes is on
// either side of (--pid); nil keeps every pair.
func (p *core) setPIDs(pids []int) { p.pids = pids }

// newCore is a pipeline for samples taken every interval (0: any interval
// counts, for tests that make their own samples).
func newCore(opts model.Options, interval time.Duration) *core {
	if opts.ShortReason == nil {
		opts.ShortReason = waitreason.Short
	}
	return &core{opts: opts, min: MinInterval(interval), spikes: model.NewSpikeDetector(SpikeWindow),
		stacks: model.NewStackWindow(model.StackOptions{})}
}

// foldStacks makes each Snapshot carry its interval's stacks for flame
// graphs (-o folded).
func (p *core) foldStacks(on bool) { p.stacks.SetFolded(on) }

// resetStacks forgets the stack tracer's reads: a replay seeks, or lost
// samples.
func (p *core) resetStacks() { p.stacks.Reset() }

// observeStacks adds s's stack read to the window the shares are over;
// deriveInto does so for its cur, so only samples not derived need it.
func (p *core) observeStacks(s *model.Sample) { p.stacks.Observe(s.Stacks) }

// tooShort says whether prev→cur is too short an interval to take rates
// over; such a cur should be dropped and prev kept as the base.
func (p *core) tooShort(prev, cur *model.Sample) bool {
	return cur.Time.Sub(prev.Time) < p.min
}

// judge gives s its spike verdict against the intervals judged before it,
// and adds it to that history.
func (p *core) judge(s *model.Snapshot) {
	if s.System.NoRates != "" {
		// No rate is not a rate of 0: it neither is a spike nor moves
		// the baseline.
		s.Spike = model.Spike{}
		return
	}
	s.Spike = p.spikes.Observe(s.Time, s.System.ContextSwitchesPerSec, s.System.CPUs)
}

// continues tells whether the tracer's read w began with the read before,
// as every read but the first after an attach does. A recording keeps
// these times as offsets from their samples' wall clock times, which NTP
// may slew apart from the monotonic clock by up to 0.05% between two
// samples, so in a replay the two may differ by that much. A read whose
// start is unknown (zero Since) is taken to follow the one before.
func continues(before, w *model.WakeupSample) bool {
	if w.Since.IsZero() {
		return true
	}
	d := w.Since.Sub(before.Time)
	return d.Abs() <= time.Millisecond+w.Time.Sub(before.Time)/1000
}

// deriveInto is the Snapshot of prev→cur without the spike verdict, which
// depends on the history: rates and hot threads (with the wait reasons cur
// carries), the wake-up graph when cur carries wake-up counts, and the
// stacks over the window. It writes into s and reuses its slices, as
// model.ComputeInto does: a pass over a recording is done with each
// Snapshot before the next, which would otherwise allocate a host's worth
// of rows per interval.
func (p *core) deriveInto(s *model.Snapshot, prev, cur *model.Sample) {
	opts := p.opts
	opts.AfterStepBack = !p.steppedBack.IsZero() && prev.Time.Equal(p.steppedBack)
	if model.StepsBack(&prev.System, &cur.System) {
		p.steppedBack = cur.Time
	}
	model.ComputeInto(s, prev, cur, opts)
	// The tracer's counts give figures only when they began with the
	// previous sample's read, so that they cover the interval the threads'
	// counters do: a wake-up rate stands beside the voluntary switches it
	// ended. The first read after the tracer attached began elsewhere (at
	// the attach, mid-interval, or before the baseline) and is only the
	// start of the next; over a load that changed meanwhile its rates
	// disagreed with the threads' by up to a tenth.
	if w, before := cur.Wakeups, prev.Wakeups; w != nil && before != nil && continues(before, w) {
		g := model.ComputeWakeups(before, before.Time, w)
		if len(p.pids) > 0 {
			g.Pairs = slices.DeleteFunc(g.Pairs, func(x model.WakeupPair) bool {
				return !slices.Contains(p.pids, x.WakerPID) && !slices.Contains(p.pids, x.WakeePID)
			})
		}
		s.Wakeups = &g
	}
	// The shares are over the last reads; deriving the same sample again
	// counts its read once.
	p.stacks.Observe(cur.Stacks)
	model.AttachStacks(s, p.stacks.Stacks(cur.Stacks, s.Threads))
}

// Raw is where an interval's raw samples come from: the sampler's passes
// with the wait looks and tracer reads made in them (Live), or a
// recording's samples, which hold those already (Player). Read takes the
// interval's end: the raw sample that closes it and the one before it,
// both timed by the clock rates are taken over. A source that can look
// again, write or retarget (live) says so by the methods of liveSource; one
// whose intervals were judged before (a replay's seek) by judgedSource.
type Raw interface {
	Read() (prev, cur *model.Sample, err error)
}

// liveSource is what a live source does beyond reading.
type liveSource interface {
	// lookNow looks at the threads snap found hot that were not looked
	// at during the interval, into cur; true when it did, and the
	// Snapshot is derived again with them (as a replay of cur will be).
	lookNow(snap *model.Snapshot) bool
	// keep hands cur, complete, to a recording being written.
	keep() error
	// retarget points the looks and tracers at what snap found, for the
	// next interval.
	retarget(snap *model.Snapshot)
}

// judgedSource is a source whose intervals were judged once, in order:
// ok false, judge this one now.
type judgedSource interface {
	judged() (v model.Spike, ok bool)
}

// Intervals makes Snapshots from a raw source, each interval in the one
// order every Snapshot is made in, live or replayed: the raw sample with
// its wait looks and tracer reads, derive (the stack window is observed
// there), the late looks at threads that just became hot, judge,
// retarget.
type Intervals struct {
	core  *core
	src   Raw
	live  liveSource
	judge judgedSource
}

// NewIntervals is the pipeline over src for samples taken every nominal
// interval (0: any interval counts).
func NewIntervals(src Raw, opts model.Options, nominal time.Duration) *Intervals {
	it := &Intervals{core: newCore(opts, nominal), src: src}
	it.live, _ = src.(liveSource)
	it.judge, _ = src.(judgedSource)
	return it
}

// Next is the Snapshot of the source's next interval, into dst, whose
// slices it reuses.
func (it *Intervals) Next(dst *model.Snapshot) error {
	p := it.core
	prev, cur, err := it.src.Read()
	if err != nil {
		return err
	}
	p.deriveInto(dst, prev, cur)
	if it.live != nil && it.live.lookNow(dst) {
		p.deriveInto(dst, prev, cur)
	}
	if it.live != nil {
		if err := it.live.keep(); err != nil {
			return err
		}
	}
	if v, ok := it.judged(); ok {
		dst.Spike = v
	} else {
		p.judge(dst)
	}
	if it.live != nil {
		it.live.retarget(dst)
	}
	return nil
}

func (it *Intervals) judged() (model.Spike, bool) {
	if it.judge == nil {
		return model.Spike{}, false
	}
	return it.judge.judged()
}
