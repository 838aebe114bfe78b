package waketrace

import (
	"sync/atomic"
	"time"

	"github.com/ctxtop/ctxtop/internal/bpfutil"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/polltimer"
)

// Collector attaches the tracer only while someone looks (a view is open,
// or batch mode asked for wake-ups), so a monitor that does not show them
// pays nothing, and turns each read into rates. Its methods are safe from
// any goroutine: the TUI switches it from its event loop while a sampling
// command reads it. Its state is guarded by life's lock.
type Collector struct {
	life       *bpfutil.Lifecycle[*Tracer]
	wantPerCPU atomic.Bool
	since      time.Time
	// prev is the previous read (nil before the first), held in last.
	prev      *model.WakeupSample
	last, cur model.WakeupSample
	// window ends the switch program's part of an interval, at windowEnd
	// (zero when no window is open). It is a polltimer: a Go timer would
	// wake the runtime's sysmon thread too, two more switches of the
	// monitor at every refresh while a load runs.
	window    *polltimer.Timer
	windowEnd time.Time
}

// The switch program, which times wake-ups to the wakee's switch-in, runs
// at every context switch: it is attached for a share of each interval
// that keeps its runs to about latencyBudget wake-ups a second (all of the
// interval below that), and never less than minLatencyWindow.
const (
	latencyBudget    = 20000
	minLatencyWindow = 50 * time.Millisecond
	// firstLatencyWindow is the share of the first interval, whose rate
	// is not known yet.
	firstLatencyWindow = 100 * time.Millisecond
)

// latencyWindow is how long to time wake-ups in the interval to come,
// after one of length interval with rate wake-ups a second; 0 for all of
// it.
func latencyWindow(rate float64, interval time.Duration) time.Duration {
	if rate <= latencyBudget {
		return 0
	}
	return max(time.Duration(float64(interval)*latencyBudget/rate), minLatencyWindow)
}

// NewCollector returns a collector that is off.
func NewCollector() *Collector { return newCollector(Open) }

// newCollector is NewCollector with the tracer opened by open.
func newCollector(open func() (*Tracer, error)) *Collector {
	c := &Collector{}
	c.life = bpfutil.NewLifecycle(bpfutil.Hooks[*Tracer]{Open: open, Start: c.start, Sync: c.sync, Stop: c.stopWindow})
	return c
}

// SetEnabled attaches (true) or detaches (false) the programs. A failure
// to attach is kept and shown by every read until it is switched off.
func (c *Collector) SetEnabled(on bool) { c.life.SetEnabled(on) }

// Want records whether the programs should be attached, at once and
// without blocking; Apply, which takes a while to load them, then makes it
// so (bpfutil.Lifecycle).
func (c *Collector) Want(on bool) { c.life.Want(on) }

// WantPerCPU records whether the per-CPU switch and migration counters
// should run too, while the programs are attached: they cost every context
// switch, so only a view that shows them asks. Apply makes it so.
func (c *Collector) WantPerCPU(on bool) { c.wantPerCPU.Store(on) }

// Apply attaches or detaches the programs as the last Want and WantPerCPU
// asked.
func (c *Collector) Apply() { c.life.Apply() }

// Err is why the programs could not be attached, nil when they are (or
// the collector is off).
func (c *Collector) Err() error { return c.life.Err() }

// Close detaches the programs for good.
func (c *Collector) Close() { c.life.Close() }

// start counts from now, timing wake-ups for the first window.
func (c *Collector) start(*Tracer) error {
	c.since, c.prev = time.Now(), nil
	return c.timeLatencies(firstLatencyWindow)
}

func (c *Collector) sync(tr *Tracer) error { return tr.SetPerCPU(c.wantPerCPU.Load()) }

// timeLatencies times wake-ups for d from now, or until told otherwise
// when d is 0. c.life is locked and its tracer loaded.
func (c *Collector) timeLatencies(d time.Duration) error {
	c.windowEnd = time.Time{}
	if c.window != nil {
		c.window.Stop()
	}
	tr, _, _ := c.life.Ready()
	if err := tr.TimeLatencies(true); err != nil {
		return err
	}
	if d == 0 {
		return nil
	}
	if c.window == nil {
		c.window = polltimer.New(c.endWindow)
	}
	c.windowEnd = time.Now().Add(d)
	c.window.Start(d)
	return nil
}

// endWindow stops timing wake-ups when the window is over. An expiry of a
// window that a later one replaced may still be on its way here; the
// window's end tells them apart.
func (c *Collector) endWindow() {
	c.life.Lock()
	defer c.life.Unlock()
	tr, _, _ := c.life.Ready()
	if c.windowEnd.IsZero() || time.Now().Before(c.windowEnd) || tr == nil {
		return
	}
	c.windowEnd = time.Time{}
	c.window.Stop()
	tr.TimeLatencies(false)
}

// Read reads the maps and returns the raw counts since the previous read
// (or since the programs attached, Since), a copy the caller owns: what a
// live Sample carries and a recording keeps. It returns nil and "" when
// the collector is off, nil and why when the programs are not attached.
func (c *Collector) Read() (*model.WakeupSample, string) {
	c.life.Lock()
	defer c.life.Unlock()
	tr, ok, why := c.life.Ready()
	if !ok {
		return nil, why
	}
	if err := tr.Read(&c.cur); err != nil {
		return nil, "reading the wake-up maps: " + err.Error()
	}
	since := c.since
	if c.prev != nil {
		since = c.prev.Time
	}
	raw := &model.WakeupSample{Time: c.cur.Time, Since: since, Dropped: c.cur.Dropped,
		Pairs: append([]model.WakeupPairCount(nil), c.cur.Pairs...), CPUs: append([]model.CPUSchedCount(nil), c.cur.CPUs...)}
	// Pairs were drained; only the per-CPU totals carry over.
	c.last.Time, c.last.Dropped = c.cur.Time, c.cur.Dropped
	c.last.CPUs = append(c.last.CPUs[:0], c.cur.CPUs...)
	c.prev = &c.last
	if d := raw.Time.Sub(since); d > 0 {
		var n uint64
		for _, p := range raw.Pairs {
			n += p.Wakeups
		}
		c.life.Fail(c.timeLatencies(latencyWindow(float64(n)/d.Seconds(), d)))
	}
	return raw, ""
}

// stopWindow ends the window for good: the tracer is about to be
// detached.
func (c *Collector) stopWindow() {
	c.windowEnd = time.Time{}
	if c.window != nil {
		c.window.Close()
		c.window = nil
	}
}
