// Package pipeline is the one road from raw samples to what every screen,
// report, recording and exporter shows:
//
//	sources:  Live (the sampler, /proc) | record.Player (a file)
//	               └──── raw model.Sample ────┘
//	pipeline: Pipeline.Step: rates, wait reasons, spikes, wake-up graph
//	loop:     Run, one paced loop (missed ticks skipped, never two samples
//	          closer than half an interval)
//	sinks:    the TUI, batch text and JSON, the record writer
//
// Each guarantee lives in one file here: a rate is never taken over less
// than half the interval (MinInterval, used by both the loop's pacing and
// Step), live and replay derive a Snapshot by the same Step, and the spike
// rule runs only in Step.
package pipeline

import (
	"slices"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/waitreason"
)

// Source yields one Snapshot per call: a live sampler or a recording.
type Source interface {
	Next() (model.Snapshot, error)
}

// SpikeWindow is how far back the spike rule looks for the usual level.
const SpikeWindow = 5 * time.Minute

// MinInterval is the shortest interval a rate is taken over for a nominal
// refresh interval: half of it. Over a few milliseconds a handful of
// switches scale into absurd rates (a thread at 73% CPU that runs at 25%,
// thread CPU summing past the CPUs there are), which is exactly what a
// stalled host would show if samples were taken back to back.
func MinInterval(nominal time.Duration) time.Duration { return nominal / 2 }

// Pipeline derives Snapshots from consecutive samples. It holds the one
// piece of state the model needs across intervals, the spike detector's
// recent history; everything else is a pure function of the two samples.
type Pipeline struct {
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

// SetPIDs limits the wake-up graph to pairs one of these processes is on
// either side of (--pid); nil keeps every pair.
func (p *Pipeline) SetPIDs(pids []int) { p.pids = pids }

// New is a pipeline for samples taken every interval (0: any interval
// counts, for tests that make their own samples).
func New(opts model.Options, interval time.Duration) *Pipeline {
	if opts.ShortReason == nil {
		opts.ShortReason = waitreason.Short
	}
	return &Pipeline{opts: opts, min: MinInterval(interval), spikes: model.NewSpikeDetector(SpikeWindow),
		stacks: model.NewStackWindow(model.StackOptions{})}
}

// FoldStacks makes each Snapshot carry its interval's stacks for flame
// graphs (-o folded).
func (p *Pipeline) FoldStacks(on bool) { p.stacks.SetFolded(on) }

// StackWindow is how many consecutive samples the stacks of a Snapshot
// are made from: a replay that seeks must Observe the samples before the
// one it shows, ResetStacks first.
func (p *Pipeline) StackWindow() int { return model.DefaultStackWindow }

// ResetStacks forgets the stack tracer's reads: a replay seeks, or lost
// samples.
func (p *Pipeline) ResetStacks() { p.stacks.Reset() }

// ObserveStacks adds s's stack read to the window the shares are over;
// Derive does so for its cur, so only samples not derived need it.
func (p *Pipeline) ObserveStacks(s *model.Sample) { p.stacks.Observe(s.Stacks) }

// Options are the model options every Step uses.
func (p *Pipeline) Options() model.Options { return p.opts }

// TooShort says whether prev→cur is too short an interval to take rates
// over; such a cur should be dropped and prev kept as the base.
func (p *Pipeline) TooShort(prev, cur *model.Sample) bool {
	return cur.Time.Sub(prev.Time) < p.min
}

// Step is the Snapshot of the interval prev→cur: rates and hot threads
// (with the wait reasons cur carries), the spike verdict, and the wake-up
// graph when cur carries wake-up counts. It feeds the spike history, so it
// must see every interval once, in order; Derive is the same without it.
func (p *Pipeline) Step(prev, cur *model.Sample) model.Snapshot {
	s := p.Derive(prev, cur)
	p.Judge(&s)
	return s
}

// Judge gives s its spike verdict against the intervals judged before it,
// and adds it to that history.
func (p *Pipeline) Judge(s *model.Snapshot) {
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

// Derive is Step without the spike verdict, which depends on the history:
// for a seek in a recording, whose verdicts were taken in order once.
func (p *Pipeline) Derive(prev, cur *model.Sample) model.Snapshot {
	var s model.Snapshot
	p.DeriveInto(&s, prev, cur)
	return s
}

// DeriveInto is Derive writing into s and reusing its slices, as
// model.ComputeInto does: for a pass over a recording that is done with
// each Snapshot before the next, which would otherwise allocate a host's
// worth of rows per interval.
func (p *Pipeline) DeriveInto(s *model.Snapshot, prev, cur *model.Sample) {
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
