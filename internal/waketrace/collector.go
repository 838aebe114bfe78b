package waketrace

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/polltimer"
)

// Collector attaches the tracer only while someone looks (a view is open,
// or batch mode asked for wake-ups), so a monitor that does not show them
// pays nothing, and turns each read into rates. Its methods are safe from
// any goroutine: the TUI switches it from its event loop while a sampling
// command reads it.
type Collector struct {
	mu         sync.Mutex
	want       atomic.Bool
	wantPerCPU atomic.Bool
	open       func() (*Tracer, error)
	tr         *Tracer
	err        error
	on         bool
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
func NewCollector() *Collector { return &Collector{open: Open} }

// SetEnabled attaches (true) or detaches (false) the programs. A failure
// to attach is kept and shown by every Snapshot until it is switched off.
func (c *Collector) SetEnabled(on bool) {
	c.want.Store(on)
	c.Apply()
}

// Want records whether the programs should be attached, at once and
// without blocking; Apply, which takes a while to load them, then makes it
// so. A caller with an event loop calls Want there and Apply off it: of
// several Applies in flight, whichever runs last applies the latest Want.
func (c *Collector) Want(on bool) { c.want.Store(on) }

// WantPerCPU records whether the per-CPU switch and migration counters
// should run too, while the programs are attached: they cost every context
// switch, so only a view that shows them asks. Apply makes it so.
func (c *Collector) WantPerCPU(on bool) { c.wantPerCPU.Store(on) }

// Apply attaches or detaches the programs as the last Want and WantPerCPU
// asked.
func (c *Collector) Apply() {
	c.mu.Lock()
	defer c.mu.Unlock()
	on := c.want.Load()
	if on != c.on {
		c.on = on
		if !on {
			c.closeLocked()
			return
		}
		c.tr, c.err = c.open()
		c.since, c.prev = time.Now(), nil
		if c.err == nil {
			c.timeLatencies(firstLatencyWindow)
		}
	}
	if c.on && c.err == nil {
		c.err = c.tr.SetPerCPU(c.wantPerCPU.Load())
	}
}

// timeLatencies times wake-ups for d from now, or until told otherwise
// when d is 0. c.mu is held.
func (c *Collector) timeLatencies(d time.Duration) {
	c.windowEnd = time.Time{}
	if c.window != nil {
		c.window.Stop()
	}
	if err := c.tr.TimeLatencies(true); err != nil {
		c.err = err
		return
	}
	if d == 0 {
		return
	}
	if c.window == nil {
		c.window = polltimer.New(c.endWindow)
	}
	c.windowEnd = time.Now().Add(d)
	c.window.Start(d)
}

// endWindow stops timing wake-ups when the window is over. An expiry of a
// window that a later one replaced may still be on its way here; the
// window's end tells them apart.
func (c *Collector) endWindow() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.windowEnd.IsZero() || time.Now().Before(c.windowEnd) || c.tr == nil {
		return
	}
	c.windowEnd = time.Time{}
	c.window.Stop()
	c.tr.TimeLatencies(false)
}

// Err is why the programs could not be attached, nil when they are (or
// the collector is off).
func (c *Collector) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Read reads the maps and returns the raw counts since the previous read
// (or since the programs attached, Since), a copy the caller owns: what a
// live Sample carries and a recording keeps. It returns nil and "" when
// the collector is off, nil and why when the programs are not attached.
func (c *Collector) Read() (*model.WakeupSample, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.on {
		return nil, ""
	}
	if c.err != nil {
		return nil, c.err.Error()
	}
	if err := c.tr.Read(&c.cur); err != nil {
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
		c.timeLatencies(latencyWindow(float64(n)/d.Seconds(), d))
	}
	return raw, ""
}

// Close detaches the programs for good.
func (c *Collector) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.want.Store(false)
	c.on = false
	c.closeLocked()
}

func (c *Collector) closeLocked() {
	c.windowEnd = time.Time{}
	if c.window != nil {
		c.window.Close()
		c.window = nil
	}
	if c.tr != nil {
		c.tr.Close()
		c.tr = nil
	}
	c.err = nil
}
