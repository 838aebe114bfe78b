package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pipeline"
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

// Player replays a Recording through the pipeline that live sampling
// takes (pipeline.Pipeline), so a replay shows what the live run showed.
// It is safe for one caller stepping and another seeking: calls are
// serialised.
type Player struct {
	mu    sync.Mutex
	rec   *Recording
	pipe  *pipeline.Pipeline
	marks []Mark
	epoch time.Time

	d         decoder
	at        int
	slots     [2]model.Sample
	prev, cur *model.Sample
	lo, hi    int
	// wakeups and stacks: some sample holds the tracer's read, so the
	// recorder ran with --wakeups, --stacks.
	wakeups, stacks bool
}

// NewPlayer decodes the recording once to mark every sample's rates and
// spikes, and stands before the first sample. A zero HotThreshold takes
// the recording's own.
func NewPlayer(r *Recording, opts model.Options) (*Player, error) {
	return NewPlayerVisit(r, opts, Visit{})
}

// Visit hands the snapshots of one window to a reader while NewPlayerVisit
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

// NewPlayerVisit is NewPlayer that also hands the window's snapshots to
// v.Each as it marks them. The player's range is left whole.
func NewPlayerVisit(r *Recording, opts model.Options, v Visit) (*Player, error) {
	if len(r.frames) < 2 {
		return nil, ErrEmpty
	}
	m := newMarking(r, opts, v)
	for range r.frames {
		b, err := r.frameBytes(m.p.at + 1)
		if err != nil {
			return nil, err
		}
		if err := m.p.d.apply(b); err != nil {
			return nil, err
		}
		m.frame(&m.p.d)
	}
	return m.done(), nil
}

// OpenPlayer is Open and NewPlayerVisit in one decode of the file: the
// pass that indexes and checks the frames also marks them, and hands
// v.Each the snapshots of a whole recording. A window (v.From, v.To)
// needs the index to be found (its bounds are searched for), so its
// snapshots are played once more, the window alone, after the marking:
// that is Visit. When the recording has fewer than two samples, r comes
// with ErrEmpty, for its Notes; any other error comes with neither. The
// caller closes r.
func OpenPlayer(path string, opts model.Options, v Visit) (r *Recording, p *Player, err error) {
	f, size, err := openFile(path)
	if err != nil {
		return nil, nil, err
	}
	r, p, err = readPlayer(f, size, opts, v)
	if r == nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	r.file = f
	return r, p, err
}

// ParsePlayer is OpenPlayer on a recording in memory.
func ParsePlayer(data []byte, opts model.Options, v Visit) (*Recording, *Player, error) {
	return readPlayer(bytes.NewReader(data), int64(len(data)), opts, v)
}

func readPlayer(src io.ReaderAt, size int64, opts model.Options, v Visit) (*Recording, *Player, error) {
	whole := v.From.IsZero() && v.To.IsZero()
	var m *marking
	r, err := read(src, size, func(r *Recording) func(*decoder) {
		inline := Visit{}
		if whole {
			inline = v
		}
		m = newMarking(r, opts, inline)
		return m.frame
	})
	if err != nil {
		return nil, nil, err
	}
	if len(r.frames) < 2 {
		return r, nil, ErrEmpty
	}
	p := m.done()
	if !whole && v.Each != nil {
		if err := p.Visit(v); err != nil {
			r.Close()
			return nil, nil, err
		}
	}
	return r, p, nil
}

// marking is the pass that marks a recording's samples, one frame at a
// time, as they are decoded: by the player itself (NewPlayerVisit) or by
// the reader's indexing pass (OpenPlayer).
type marking struct {
	p      *Player
	v      Visit
	lo, hi int
	// snap is one snapshot's rows, reused: the marking pass is done with
	// each before the next.
	snap model.Snapshot
}

func newMarking(r *Recording, opts model.Options, v Visit) *marking {
	if !(opts.HotThreshold > 0) {
		opts.HotThreshold = r.Header.HotThreshold
	}
	// A recording of some processes (--pid) holds only theirs: the
	// switches outside them are not unexplained, as live.
	if len(r.Header.PIDs) > 0 {
		opts.Partial = true
	}
	p := &Player{rec: r, pipe: pipeline.New(opts, r.Header.Interval), at: -1}
	p.pipe.SetPIDs(r.Header.PIDs)
	p.prev, p.cur = &p.slots[0], &p.slots[1]
	p.marks = make([]Mark, 0, len(r.frames))
	m := &marking{p: p, v: v, lo: 0, hi: -1}
	if v.Each != nil {
		// The pass that indexes a recording hands over all of it
		// (readPlayer); a whole index is searched for the window.
		m.lo, m.hi = 0, math.MaxInt
		if len(r.frames) > 0 {
			m.lo, m.hi = r.window(v.From, v.To)
		}
		p.pipe.FoldStacks(true)
	}
	return m
}

// frame marks the frame d has just applied, the next of the recording's.
func (m *marking) frame(d *decoder) {
	p, r := m.p, m.p.rec
	if p.at < 0 {
		p.epoch = time.Unix(0, r.frames[0].wall)
	}
	p.advance(d)
	i := p.at
	p.wakeups = p.wakeups || p.cur.Wakeups != nil
	p.stacks = p.stacks || p.cur.Stacks != nil
	mk := Mark{Time: p.cur.Time}
	// An interval shorter than the pipeline takes rates over (a
	// recorder that caught up after a stall wrote such) has none.
	if a, b := p.monoTimes(i); i > 0 && !r.frames[i].gap && !p.pipe.TooShort(&a, &b) {
		snap := &m.snap
		p.compute(snap, i)
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
}

// done leaves the marked player standing before the first sample, its
// range whole.
func (m *marking) done() *Player {
	p := m.p
	p.lo, p.hi = 0, len(p.rec.frames)-1
	p.rewind()
	return p
}

// rewind stands the player before the first sample, folding no stacks.
func (p *Player) rewind() {
	p.pipe.FoldStacks(false)
	p.at = -1
	p.d = decoder{}
	p.pipe.ResetStacks()
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
	if p.lo, p.hi = p.rec.window(v.From, v.To); p.hi >= p.lo {
		p.pipe.FoldStacks(true)
		p.at = -1
		var snap model.Snapshot
		for err = p.nextInto(&snap); err == nil; err = p.nextInto(&snap) {
			v.Each(&snap)
		}
		if errors.Is(err, ErrEnd) || errors.Is(err, ErrEmpty) {
			err = nil
		}
	}
	p.lo, p.hi = 0, len(p.rec.frames)-1
	p.rewind()
	return err
}

// FoldStacks makes each Snapshot carry its interval's recorded stacks for
// flame graphs (-o folded).
func (p *Player) FoldStacks(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pipe.FoldStacks(on)
}

// HasWakeups says whether the recording holds wake-ups (record
// --wakeups); HasStacks whether it holds stacks (record --stacks). A replay
// without them says so rather than show an empty view.
func (p *Player) HasWakeups() bool { return p.wakeups }

// HasStacks: see HasWakeups.
func (p *Player) HasStacks() bool { return p.stacks }

// Recording is the file being played.
func (p *Player) Recording() *Recording { return p.rec }

// Marks is one entry per sample, in order. The caller must not modify it.
func (p *Player) Marks() []Mark { return p.marks }

// SetRange limits Next and Seek to samples from..to (inclusive); a zero
// time leaves that end open. It reports false when no sample with a rate
// falls inside.
func (p *Player) SetRange(from, to time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lo, p.hi = p.rec.window(from, to)
	for i := p.lo; i <= p.hi; i++ {
		if p.marks[i].Rate {
			return true
		}
	}
	return false
}

// window is the first and last sample from..to (a zero time leaves that
// end open); hi < lo when none is.
func (r *Recording) window(from, to time.Time) (lo, hi int) {
	lo, hi = 0, len(r.frames)-1
	if !from.IsZero() {
		lo = sort.Search(len(r.frames), func(i int) bool { return !r.frameTime(i).Before(from) })
	}
	if !to.IsZero() {
		hi = sort.Search(len(r.frames), func(i int) bool { return r.frameTime(i).After(to) }) - 1
	}
	return lo, hi
}

// frameTime is sample i's wall-clock time, as its Mark has it.
func (r *Recording) frameTime(i int) time.Time { return time.Unix(0, r.frames[i].wall) }

// Range is the first and last sample Next and Seek reach.
func (p *Player) Range() (lo, hi int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lo, p.hi
}

// step applies the next frame and makes it the current sample.
func (p *Player) step() error {
	b, err := p.rec.frameBytes(p.at + 1)
	if err != nil {
		return err
	}
	if err := p.d.apply(b); err != nil {
		return err
	}
	p.advance(&p.d)
	return nil
}

// advance makes the frame d has just applied, the next one, the current
// sample.
func (p *Player) advance(d *decoder) {
	p.at++
	p.prev, p.cur = p.cur, p.prev
	d.sample(p.cur, p.rec.loc)
	p.observeStacks()
}

// observeStacks adds the current sample's stack read to the window the
// shares are over, as live did when it derived the sample; the first
// sample, live's baseline, was never derived. After lost samples the
// window starts again.
func (p *Player) observeStacks() {
	if p.rec.frames[p.at].gap {
		p.pipe.ResetStacks()
	}
	if p.at > 0 {
		p.pipe.ObserveStacks(p.cur)
	}
}

// compute is the snapshot over the interval ending at sample i (= p.at).
// Rates use the recorded monotonic clock, as live; the Snapshot's Time is
// the recorded wall clock, as live.
func (p *Player) compute(snap *model.Snapshot, i int) {
	a, b := p.monoTimes(i)
	p.pipe.DeriveInto(snap, &a, &b)
	// The spike verdicts are taken once, in order, while NewPlayer marks
	// the samples (mark i is not made yet then); a seek reuses them.
	if i < len(p.marks) && p.marks[i].Rate {
		snap.Spike = p.marks[i].Spike
	} else {
		p.pipe.Judge(snap)
	}
	snap.Time = p.cur.Time
}

// monoTimes are the samples before and at i (the current ones) timed by
// the recorded monotonic clock, which rates are taken over, as live.
func (p *Player) monoTimes(i int) (a, b model.Sample) {
	a, b = *p.prev, *p.cur
	if i > 0 {
		a.Time = p.epoch.Add(time.Duration(p.rec.frames[i-1].mono))
	}
	b.Time = p.epoch.Add(time.Duration(p.rec.frames[i].mono))
	return a, b
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
	var snap model.Snapshot
	err := p.nextInto(&snap)
	return snap, err
}

// nextInto is Next into dst's rows.
func (p *Player) nextInto(dst *model.Snapshot) error {
	if p.at < p.lo-1 {
		// seek moves on to the first sample with a rate.
		return p.seekInto(dst, p.lo)
	}
	for p.at < p.hi {
		if err := p.step(); err != nil {
			return err
		}
		if p.marks[p.at].Rate {
			p.compute(dst, p.at)
			return nil
		}
	}
	return ErrEnd
}

// Seek returns the snapshot of sample i (moved forward to the nearest one
// with a rate, and into the range), exactly as playing up to it would.
func (p *Player) Seek(i int) (model.Snapshot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var snap model.Snapshot
	err := p.seekInto(&snap, i)
	return snap, err
}

func (p *Player) seekInto(dst *model.Snapshot, i int) error {
	i = max(min(i, p.hi), p.lo)
	for i < p.hi && !p.marks[i].Rate {
		i++
	}
	for i > p.lo && !p.marks[i].Rate {
		i--
	}
	if !p.marks[i].Rate {
		return ErrEmpty
	}
	if i != p.at+1 || p.at < 0 {
		// Start from the last checkpoint early enough for the stack
		// window's samples before i, else at or before i-1.
		before := func(last int) int {
			return sort.Search(len(p.rec.checks), func(j int) bool { return p.rec.checks[j].idx > last }) - 1
		}
		k := before(i - p.pipe.StackWindow())
		if k < 0 {
			k = before(i - 1)
		}
		if k < 0 {
			return ErrEmpty
		}
		c := &p.rec.checks[k]
		p.d = decoder{st: c.st.clone(), synced: true}
		p.at = c.idx
		p.d.sample(p.cur, p.rec.loc)
		p.pipe.ResetStacks()
		p.observeStacks()
	}
	for p.at < i {
		if err := p.step(); err != nil {
			return err
		}
	}
	p.compute(dst, i)
	return nil
}
