package pipeline

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/sampler"
)

// WakeupReader is the wake-up tracer as the live source reads it: the raw
// counts since its last read, which go into the Sample (and a recording),
// nil while it is off; or why it is not attached.
type WakeupReader interface {
	Read() (*model.WakeupSample, string)
}

// StacksReader is the stack tracer as the live source reads it: Drain is
// the interval's symbolized stacks and counts, which go into the Sample (and
// a recording), nil while it is off; Retarget chooses the next targets
// from the Snapshot made with them.
type StacksReader interface {
	Drain() *model.StackSample
	Retarget(snap *model.Snapshot)
}

// LiveConfig is what a live source samples and where its samples go.
type LiveConfig struct {
	Sampler sampler.Config
	// Interval is the nominal refresh interval; a Next called sooner
	// than MinInterval after the last sample waits until then.
	Interval time.Duration
	// Record, when set, gets every raw Sample, the baseline included,
	// after its wait looks: a recording replays the very samples the
	// reports came from.
	Record func(*model.Sample) error
	// Wakeups, when set, adds the wake-up graph of each interval; with
	// Sampler.PIDs, only the pairs one of those processes is on.
	Wakeups WakeupReader
	// Stacks, when set, adds where target threads block and are woken
	// from.
	Stacks StacksReader
	// FoldedStacks keeps each interval's stacks for flame graphs.
	FoldedStacks bool
	// TargetStacksFirst chooses the stack tracer's targets before the
	// first reported interval (see targetFirst), so that a single report
	// (-n 1) holds the stacks of its interval. Without PIDs the targets
	// come from a snapshot, and the first report would have none.
	TargetStacksFirst bool
}

// Live is the source on this host: the sampler's passes over /proc, the
// wait-reason looks between them, and the pipeline over both.
type Live struct {
	cfg       LiveConfig
	s         *sampler.Sampler
	waits     *sampler.WaitLooker
	pipe      *core
	it        *Intervals
	prev, cur *model.Sample
	bufs      [2]model.Sample
	// minGap is MinInterval of the current interval; the TUI changes it
	// while a Next may be under way.
	minGap atomic.Int64
	// wake and wakeWhy are the wake-up tracer's read in the pass under
	// way, taken right after the tasks' counters (readWakeups).
	wake    *model.WakeupSample
	wakeWhy string
	// unavailable is why the interval under way has no wake-up graph.
	unavailable string
	// mu is held by Next and by the first interval's peek, which runs on
	// a timer's goroutine: the sampler is not safe for concurrent use.
	mu sync.Mutex
	// peekTimer takes the peek halfway through the first interval; once
	// Next has begun (next) or the source is closed, it is moot. peeking
	// is set while it samples; peekDone is closed when it has returned.
	peekTimer     *time.Timer
	peekDone      chan struct{}
	next, peeking bool
	closed        atomic.Bool
}

// NewLive opens the sampler and takes the baseline sample, so the first
// Next already has an interval to compute rates over.
func NewLive(cfg LiveConfig) (*Live, error) {
	l := &Live{cfg: cfg}
	if cfg.Wakeups != nil {
		cfg.Sampler.AfterRead = l.readWakeups
	}
	s, err := sampler.New(cfg.Sampler)
	if err != nil {
		return nil, err
	}
	opts := liveOptions(cfg.Sampler)
	l.s, l.waits = s, s.NewWaitLooker()
	l.it = NewIntervals(liveRaw{l}, opts, cfg.Interval)
	l.pipe = l.it.core
	l.pipe.setPIDs(cfg.Sampler.PIDs)
	l.pipe.foldStacks(cfg.FoldedStacks)
	l.prev, l.cur = &l.bufs[0], &l.bufs[1]
	l.SetInterval(cfg.Interval)
	if err := s.Sample(l.prev); err != nil {
		l.Close()
		return nil, err
	}
	// The next pass writes every thread into l.cur, which has never held
	// them: growing it then, and the kernel faulting its pages in, made
	// that pass (the peek) two to five times a steady one. A copy of the
	// baseline's does both now, in the start, with the baseline's room to
	// grow: an exact copy was grown again as soon as the host gained a few
	// threads.
	l.cur.Tasks = append(slices.Grow(l.cur.Tasks[:0], cap(l.prev.Tasks)), l.prev.Tasks...)
	l.baselineWakeups(l.prev)
	targeted := cfg.TargetStacksFirst && cfg.Stacks != nil && len(cfg.Sampler.PIDs) == 0
	if targeted {
		if err := l.targetFirst(); err != nil {
			l.Close()
			return nil, err
		}
	}
	if err := l.keepSample(l.prev); err != nil {
		l.Close()
		return nil, err
	}
	if !targeted && cfg.Interval > 0 {
		l.peekDone = make(chan struct{})
		l.peekTimer = time.AfterFunc(MinInterval(cfg.Interval), l.peek)
	}
	return l, nil
}

// peek chooses the first interval's wait-look targets halfway through it.
// Later intervals have theirs from the last Snapshot, and their looks are
// spread over the interval; the first had none, so its hot threads were
// looked at only at the refresh, a few looks within microseconds of one
// another. Those see one moment of the scheduler, not several: a side of a
// busy ping-pong is on a CPU, or preempted and waiting out another thread's
// time slice, at about half of such moments, and the first report named no
// reason for one side about half the time. The pass here is neither
// reported nor recorded, and the wake-up tracer is not read in it, so the
// interval's counts still run from the baseline.
func (l *Live) peek() {
	defer close(l.peekDone)
	// Held, the lock is Next's, which may be waiting out MinInterval
	// (Close must not wait for that): the first interval is over anyway.
	if !l.mu.TryLock() {
		return
	}
	defer l.mu.Unlock()
	if l.next || l.closed.Load() {
		return
	}
	l.peeking = true
	err := l.s.Sample(l.cur)
	l.peeking = false
	if err != nil {
		return // Next meets it again, and says so
	}
	var snap model.Snapshot
	model.ComputeInto(&snap, l.prev, l.cur, l.pipe.opts)
	l.waits.ArmOver(&snap, l.interval()-time.Since(l.prev.Time))
}

// interval is the nominal refresh interval as it stands.
func (l *Live) interval() time.Duration { return 2 * time.Duration(l.minGap.Load()) }

// targetFirst takes an interval of half the refresh interval that is not
// reported, only to choose the stack tracer's first targets (the hottest
// blocking threads) from, and makes its end the baseline: the first
// reported interval is then traced from its start. Its stacks are
// dropped: there were no targets to take them of.
func (l *Live) targetFirst() error {
	time.Sleep(MinInterval(l.cfg.Interval))
	if err := l.s.Sample(l.cur); err != nil {
		return err
	}
	l.cur.Waits = l.cur.Waits[:0]
	l.cur.Stacks = nil
	l.baselineWakeups(l.cur)
	l.cfg.Stacks.Drain()
	var snap model.Snapshot
	l.pipe.deriveInto(&snap, l.prev, l.cur)
	l.cfg.Stacks.Retarget(&snap)
	// Its hot threads are the first reported interval's wait-look
	// targets too (see peek).
	l.waits.ArmOver(&snap, l.interval())
	l.prev, l.cur = l.cur, l.prev
	return nil
}

// SetInterval follows a refresh interval changed at run time (the TUI's
// + and -).
// It is safe to call while a Next is under way.
func (l *Live) SetInterval(d time.Duration) {
	l.minGap.Store(int64(MinInterval(d)))
}

// Next samples now and returns the Snapshot over the time since the last
// sample; called sooner than MinInterval after it (a pause toggled twice
// in a row), it waits first. The Snapshot owns its slices.
func (l *Live) Next() (model.Snapshot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next = true
	var snap model.Snapshot
	if err := l.it.Next(&snap); err != nil {
		return model.Snapshot{}, err
	}
	l.prev, l.cur = l.cur, l.prev
	return snap, nil
}

// liveRaw is Live as the pipeline reads it, which its callers do not.
type liveRaw struct{ *Live }

// Read is the pass that ends the interval. The looks belong to the
// interval that ends now, so they go into the sample that closes it, and a
// recording replays them; so do the wake-up and stack tracers' counts.
func (r liveRaw) Read() (prev, cur *model.Sample, err error) {
	if wait := time.Duration(r.minGap.Load()) - time.Since(r.prev.Time); wait > 0 {
		time.Sleep(wait)
	}
	r.wake, r.wakeWhy = nil, ""
	err = r.s.Sample(r.cur)
	r.cur.Waits = r.waits.Collect(r.cur.Waits[:0])
	r.cur.Wakeups = r.wake
	r.unavailable = r.wakeWhy
	r.cur.Stacks = nil
	if r.cfg.Stacks != nil {
		r.cur.Stacks = r.cfg.Stacks.Drain()
	}
	return r.prev, r.cur, err
}

// lookNow: a thread that just became hot was not looked at during the
// interval: one look now, so even a single report (-n 1) says what it
// waits on.
func (r liveRaw) lookNow(snap *model.Snapshot) bool { return r.waits.LookNow(snap, r.cur) }

func (r liveRaw) keep() error { return r.keepSample(r.cur) }

func (r liveRaw) retarget(snap *model.Snapshot) {
	if r.unavailable != "" {
		snap.Wakeups = &model.Wakeups{Unavailable: r.unavailable}
	}
	if r.cfg.Stacks != nil {
		r.cfg.Stacks.Retarget(snap)
	}
	r.waits.Arm(snap)
}

// Skipped lists the --pid targets that were already gone at NewLive and
// are not sampled (sampler.Sampler.Skipped).
func (l *Live) Skipped() []int { return l.s.Skipped() }

// readWakeups reads the wake-up tracer within a pass, right after the
// tasks' counters (sampler.Config.AfterRead): the tracer's interval and
// the threads' then end at the same moment, where a read after the pass
// ended as much later as the rest of the pass took, or the scheduler kept
// the monitor waiting meanwhile.
func (l *Live) readWakeups() {
	if !l.peeking {
		l.wake, l.wakeWhy = l.cfg.Wakeups.Read()
	}
}

// baselineWakeups makes the tracer's read in the pass that took s a
// baseline: the tracer, attached before, has counted since, and draining
// what it counted so far makes the first interval's counts cover the same
// time as the threads' counters.
func (l *Live) baselineWakeups(s *model.Sample) {
	if s.Wakeups = l.wake; l.wake != nil {
		l.wake.Pairs = nil
	}
}

// Close stops the wait-reason looks and releases the sampler's files.
func (l *Live) Close() error {
	l.stopPeek()
	l.waits.Close()
	return l.s.Close()
}

// CloseForExit is Close for a process that exits next: it stops the wait
// looks and leaves the sampler's files and BPF objects to the kernel,
// which releases them at exit anyway. Closing the kept-open file of each
// of 10,000 threads took a system call apiece, some 10 ms of a short
// batch run; the exit does the same work without them.
func (l *Live) CloseForExit() {
	l.stopPeek()
	l.waits.Close()
}

// stopPeek makes the first interval's peek moot, waiting out one under
// way: it would read through the sampler's files.
func (l *Live) stopPeek() {
	l.closed.Store(true)
	if l.peekTimer != nil && !l.peekTimer.Stop() {
		<-l.peekDone
	}
	l.peekTimer = nil // a second Close has nothing to wait for
}

func (l *Live) keepSample(s *model.Sample) error {
	if l.cfg.Record == nil {
		return nil
	}
	return l.cfg.Record(s)
}
