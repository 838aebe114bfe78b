package pipeline

import (
	"errors"
	"math"
	"sync"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/record"
)

// ErrEnd: no sample after the current one.
var ErrEnd = errors.New("end of recording")

// Mark is what the timeline knows of one sample without decoding it again.
type Mark struct {
	Time time.Time
	// Rate is false for the first sample and the first after damage:
	// they have no interval, so no snapshot.
	Rate      bool
	CSPerSec  float64
	InPerSec  float64
	Spike     model.Spike
	TopComm   string
	TopPID    int
	TopTID    int
	TopPerSec float64
}

// Player replays a recording's raw samples (record.Cursor) through the
// interval live sampling takes, so a replay shows what the live run
// showed; it adds what a file allows and live does not: seek, a range,
// step back, and the marks of every sample.
// It is safe for one caller stepping and another seeking: calls are
// serialised.
type Player struct {
	mu    sync.Mutex
	rec   *record.Recording
	pipe  *core
	it    *Intervals
	marks []Mark

	c         *record.Cursor
	at        int
	slots     [2]model.Sample
	prev, cur *model.Sample
	// a and b are prev and cur timed by the recorded monotonic clock,
	// which rates are taken over, as live.
	a, b model.Sample
	// snap is the Snapshot Next and Seek make, returned by value with
	// slices of its own: held here, it is not a heap allocation per call
	// as a local passed down to the pipeline's source interfaces is.
	snap   model.Snapshot
	lo, hi int
	// wakeups and stacks: some sample holds the tracer's read, so the
	// recorder ran with --wakeups, --stacks.
	wakeups, stacks bool
}

// NewPlayer decodes the recording once to mark every sample's rates and
// spikes, and stands before the first sample. A zero HotThreshold takes
// the recording's own. (OpenPlayer marks the samples in the decode that
// reads the file, and hands a reader a window's snapshots on the way.)
func NewPlayer(r *record.Recording, opts model.Options) (*Player, error) {
	if r.Samples() < 2 {
		return nil, record.ErrEmpty
	}
	m := newMarking(r, opts, Visit{})
	p := m.p
	for range r.Samples() {
		p.turn()
		if err := p.c.Next(p.cur); err != nil {
			return nil, err
		}
		if err := m.mark(); err != nil {
			return nil, err
		}
	}
	return m.done(), nil
}

// Visit hands the snapshots of one window to a reader while OpenPlayer
// marks the samples. A reader that wants each snapshot of a window once (a
// report, a comparison) then pays for one pass over the recording, not the
// marking pass and a second one through Next.
type Visit struct {
	// From and To bound the window as SetRange does; zero leaves an end
	// open.
	From, To time.Time
	// Each is given the snapshot of every sample with a rate in the
	// window, in order, with its stacks folded: what Next returns after
	// SetRange(From, To) and FoldStacks(true). It must not keep the
	// snapshot's slices.
	Each func(*model.Snapshot)
}

// OpenPlayer is record.OpenEach and NewPlayer in one decode of the
// file: the pass that indexes and checks the frames also marks them, and
// hands v.Each the snapshots of a whole recording. A window (v.From, v.To)
// needs the index to be found (its bounds are searched for), so its
// snapshots are played once more, the window alone, after the marking:
// that is Visit. When the recording has fewer than two samples, r comes
// with record.ErrEmpty, for its Notes; any other error comes with neither.
// The caller closes r.
func OpenPlayer(path string, opts model.Options, v Visit) (r *record.Recording, p *Player, err error) {
	var m marker
	r, err = record.OpenEach(path, m.start(opts, v))
	return m.finish(r, v, err)
}

// marker marks a recording's samples while the reader indexes them.
type marker struct {
	m   *marking
	err error
}

func (mk *marker) start(opts model.Options, v Visit) func(*record.Recording) func(record.Frame) {
	return func(r *record.Recording) func(record.Frame) {
		inline := Visit{}
		if v.From.IsZero() && v.To.IsZero() {
			inline = v
		}
		mk.m = newMarking(r, opts, inline)
		return func(f record.Frame) {
			if mk.err != nil {
				return
			}
			mk.m.p.turn()
			f.Sample(mk.m.p.cur)
			mk.err = mk.m.mark()
		}
	}
}

func (mk *marker) finish(r *record.Recording, v Visit, err error) (*record.Recording, *Player, error) {
	if err == nil {
		err = mk.err
	}
	if err != nil {
		if r != nil {
			r.Close()
		}
		return nil, nil, err
	}
	if r.Samples() < 2 {
		return r, nil, record.ErrEmpty
	}
	p := mk.m.done()
	if !(v.From.IsZero() && v.To.IsZero()) && v.Each != nil {
		if err := p.Visit(v); err != nil {
			r.Close()
			return nil, nil, err
		}
	}
	return r, p, nil
}

// marking is the pass that marks a recording's samples, one at a time, as
// they are decoded: by the player itself (NewPlayer) or by the reader's
// indexing pass (OpenPlayer).
type marking struct {
	p      *Player
	v      Visit
	lo, hi int
	// snap is one snapshot's rows, reused: the marking pass is done with
	// each before the next.
	snap model.Snapshot
}

func newMarking(r *record.Recording, opts model.Options, v Visit) *marking {
	if !(opts.HotThreshold > 0) {
		opts.HotThreshold = r.Header.HotThreshold
	}
	// A recording of some processes (--pid) holds only theirs: the
	// switches outside them are not unexplained, as live.
	if len(r.Header.PIDs) > 0 {
		opts.Partial = true
	}
	p := &Player{rec: r, c: r.Cursor(), at: -1}
	p.it = NewIntervals(playerRaw{p}, opts, r.Header.Interval)
	p.pipe = p.it.core
	p.pipe.setPIDs(r.Header.PIDs)
	p.prev, p.cur = &p.slots[0], &p.slots[1]
	p.marks = make([]Mark, 0, r.Samples())
	m := &marking{p: p, v: v, lo: 0, hi: -1}
	if v.Each != nil {
		// The pass that indexes a recording hands over all of it
		// (readPlayer); a whole index is searched for the window.
		m.lo, m.hi = 0, math.MaxInt
		if r.Samples() > 0 {
			m.lo, m.hi = r.Window(v.From, v.To)
		}
		p.pipe.foldStacks(true)
	}
	return m
}

// mark marks the sample just read, the next of the recording's.
func (m *marking) mark() error {
	p, r := m.p, m.p.rec
	p.observeStacks()
	i := p.at
	p.wakeups = p.wakeups || p.cur.Wakeups != nil
	p.stacks = p.stacks || p.cur.Stacks != nil
	mk := Mark{Time: p.cur.Time}
	// An interval shorter than the pipeline takes rates over (a
	// recorder that caught up after a stall wrote such) has none.
	if i > 0 && !r.Gap(i) && !p.pipe.tooShort(p.monoTimes(i)) {
		snap := &m.snap
		if err := p.compute(snap); err != nil {
			return err
		}
		mk.Rate = true
		mk.CSPerSec, mk.InPerSec = snap.System.ContextSwitchesPerSec, snap.System.InterruptsPerSec
		mk.Spike = snap.Spike
		if len(snap.Threads) > 0 {
			t := snap.Threads[0]
			mk.TopComm, mk.TopPID, mk.TopTID, mk.TopPerSec = t.Comm, t.PID, t.TID, t.TotalPerSec()
		}
		if i >= m.lo && i <= m.hi {
			m.v.Each(snap)
		}
	}
	p.marks = append(p.marks, mk)
	return nil
}

// done leaves the marked player standing before the first sample, its
// range whole.
func (m *marking) done() *Player {
	p := m.p
	p.lo, p.hi = 0, p.rec.Samples()-1
	p.rewind()
	return p
}

// rewind stands the player before the first sample, folding no stacks.
func (p *Player) rewind() {
	p.pipe.foldStacks(false)
	p.at = -1
	p.c.Rewind()
	p.pipe.resetStacks()
}

// Visit plays the window v.From..v.To once, handing v.Each each snapshot
// in it: what Next returns after SetRange(v.From, v.To) and
// FoldStacks(true). It is the pass OpenPlayer makes over a window, for a
// caller that learns the window from the recording it opened. The player
// is left standing before the first sample, its range whole.
func (p *Player) Visit(v Visit) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var err error
	if p.lo, p.hi = p.rec.Window(v.From, v.To); p.hi >= p.lo {
		p.pipe.foldStacks(true)
		p.at = -1
		p.c.Rewind()
		var snap model.Snapshot
		for err = p.nextInto(&snap); err == nil; err = p.nextInto(&snap) {
			v.Each(&snap)
		}
		if errors.Is(err, ErrEnd) || errors.Is(err, record.ErrEmpty) {
			err = nil
		}
	}
	p.lo, p.hi = 0, p.rec.Samples()-1
	p.rewind()
	return err
}

// FoldStacks makes each Snapshot carry its interval's recorded stacks for
// flame graphs (-o folded).
func (p *Player) FoldStacks(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pipe.foldStacks(on)
}

// HasWakeups says whether the recording holds wake-ups (record
// --wakeups); HasStacks whether it holds stacks (record --stacks). A replay
// without them says so rather than show an empty view.
func (p *Player) HasWakeups() bool { return p.wakeups }

// HasStacks: see HasWakeups.
func (p *Player) HasStacks() bool { return p.stacks }

// Recording is the file being played.
func (p *Player) Recording() *record.Recording { return p.rec }

// Marks is one entry per sample, in order. The caller must not modify it.
func (p *Player) Marks() []Mark { return p.marks }

// SetRange limits Next and Seek to samples from..to (inclusive); a zero
// time leaves that end open. It reports false when no sample with a rate
// falls inside; Next and Seek then return ErrEnd.
func (p *Player) SetRange(from, to time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lo, p.hi = p.rec.Window(from, to)
	for i := p.lo; i <= p.hi; i++ {
		if p.marks[i].Rate {
			return true
		}
	}
	return false
}

// Range is the first and last sample Next and Seek reach.
func (p *Player) Range() (lo, hi int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lo, p.hi
}

// turn makes the current sample the previous one, for the next to be read
// into cur.
func (p *Player) turn() {
	p.at++
	p.prev, p.cur = p.cur, p.prev
}

// step reads the next sample and makes it the current one.
func (p *Player) step() error {
	p.turn()
	if err := p.c.Next(p.cur); err != nil {
		p.at--
		p.prev, p.cur = p.cur, p.prev
		return err
	}
	p.observeStacks()
	return nil
}

// observeStacks adds the current sample's stack read to the window the
// shares are over, as live did when it derived the sample; the first
// sample, live's baseline, was never derived. After lost samples the
// window starts again.
func (p *Player) observeStacks() {
	if p.rec.Gap(p.at) {
		p.pipe.resetStacks()
	}
	if p.at > 0 {
		p.pipe.observeStacks(p.cur)
	}
}

// compute is the snapshot over the interval ending at the current sample,
// through the one interval live takes. The Snapshot's Time is the recorded
// wall clock, as live.
func (p *Player) compute(snap *model.Snapshot) error {
	if err := p.it.Next(snap); err != nil {
		return err
	}
	snap.Time = p.cur.Time
	return nil
}

// playerRaw is the Player as the pipeline reads it.
type playerRaw struct{ *Player }

// Read: the current interval, timed by the recorded monotonic clock. The
// sample already holds the looks and tracer reads live made.
func (p playerRaw) Read() (prev, cur *model.Sample, err error) {
	a, b := p.monoTimes(p.at)
	return a, b, nil
}

// judged: the spike verdicts are taken once, in order, while the player
// marks the samples (mark i is not made yet then); a seek reuses them.
func (p playerRaw) judged() (model.Spike, bool) {
	if i := p.at; i < len(p.marks) && p.marks[i].Rate {
		return p.marks[i].Spike, true
	}
	return model.Spike{}, false
}

// monoTimes are the samples before and at i (the current ones) timed by
// the recorded monotonic clock, which rates are taken over, as live.
func (p *Player) monoTimes(i int) (a, b *model.Sample) {
	p.a, p.b = *p.prev, *p.cur
	if i > 0 {
		p.a.Time = p.rec.Mono(i - 1)
	}
	p.b.Time = p.rec.Mono(i)
	return &p.a, &p.b
}

// Pos is the index of the sample last returned, -1 before the first.
func (p *Player) Pos() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.at
}

// Next returns the snapshot of the next sample with a rate, or ErrEnd.
func (p *Player) Next() (model.Snapshot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.snap = model.Snapshot{}
	err := p.nextInto(&p.snap)
	return p.snap, err
}

// nextInto is Next into dst's rows.
func (p *Player) nextInto(dst *model.Snapshot) error {
	if p.hi < p.lo {
		// An empty range (SetRange false) has nothing to play.
		return ErrEnd
	}
	if p.at < p.lo-1 {
		// seek moves on to the first sample with a rate.
		return p.seekInto(dst, p.lo)
	}
	for p.at < p.hi {
		if err := p.step(); err != nil {
			return err
		}
		if p.marks[p.at].Rate {
			return p.compute(dst)
		}
	}
	return ErrEnd
}

// Seek returns the snapshot of sample i (moved forward to the nearest one
// with a rate, and into the range), exactly as playing up to it would.
func (p *Player) Seek(i int) (model.Snapshot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.snap = model.Snapshot{}
	err := p.seekInto(&p.snap, i)
	return p.snap, err
}

func (p *Player) seekInto(dst *model.Snapshot, i int) error {
	if p.hi < p.lo {
		return ErrEnd
	}
	i = max(min(i, p.hi), p.lo)
	for i < p.hi && !p.marks[i].Rate {
		i++
	}
	for i > p.lo && !p.marks[i].Rate {
		i--
	}
	if !p.marks[i].Rate {
		return record.ErrEmpty
	}
	if i != p.at+1 || p.at < 0 {
		// Start from the last checkpoint early enough for the stack
		// window's samples before i, else at or before i-1.
		if !p.c.SeekBefore(i-model.DefaultStackWindow, p.cur) && !p.c.SeekBefore(i-1, p.cur) {
			return record.ErrEmpty
		}
		p.at = p.c.Pos()
		p.pipe.resetStacks()
		p.observeStacks()
	}
	for p.at < i {
		if err := p.step(); err != nil {
			return err
		}
	}
	return p.compute(dst)
}
