package tui

import (
	"fmt"
	"slices"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/tui/loadpanel"
)

type demoStep struct {
	title, caption string
	mode           string // empty: no load
	pin            int
}

// demoSteps is the tour: the same two-party hand-off, made cheaper or
// dearer only by where the parties run and what wakes them.
var demoSteps = []demoStep{
	{"idle baseline", "Nothing of ours runs: this is the machine's own switching.", "", pinNone},
	{"futex, unpinned", "Two threads wake each other with a futex; the scheduler may put them on different CPUs, so each wake-up can cost an IPI.", "futex", pinNone},
	{"futex, one CPU", "The same pair pinned to one CPU: a wake-up is a plain switch on the same run queue, far cheaper.", "futex", pinOne},
	{"futex, two CPUs", "One thread per CPU: every hand-off crosses CPUs — watch the rescheduling IPIs climb.", "futex", pinTwo},
	{"working set, one CPU", "The pair on one CPU again, each side now walking 1 MiB of its own memory per round trip: a switch also costs refilling the caches — the indirect cost.", "futex working-set=1M", pinOne},
	{"processes over pipes", "Two processes ping-pong a byte through pipes: the classic lmbench and perf bench sched pipe test.", "process", pinNone},
	{"thread pool, 4 per CPU", "Four CPU-bound threads per CPU: no more work gets done than with one per CPU, but the kernel now preempts them — watch NVCSW/s climb.", "pool threads=4x", pinNone},
	{"goroutines", "Goroutine hand-offs skip the kernel; the runtime's own threads still switch.", "goroutine", pinNone},
}

// DemoLoads are the load specs the demo's steps pass to Loader.Start, in
// order, each once: a mode's name, perhaps followed by options such as
// "working-set=1M" or "threads=4x" (four per allowed CPU). A Loader the
// demo runs on must accept every one; the composition root's tests check
// its Loader does.
func DemoLoads() []string {
	var out []string
	for _, s := range demoSteps {
		if s.mode != "" && !slices.Contains(out, s.mode) {
			out = append(out, s.mode)
		}
	}
	return out
}

// busyPerCPU is the most switches a second per CPU the baseline may show
// and still be called idle. An idle CPU switches a few hundred to a couple
// of thousand times a second (timer ticks, kworkers, RCU); ten thousand a
// CPU is five times that and more, which is other work running, and then
// every step's figures include it.
const busyPerCPU = 10_000

type demoState struct {
	// now is the clock the step's countdown reads; time.Now but in tests.
	now  func() time.Time
	step time.Duration
	cur  int
	gen  int
	held bool
	// done: the tour is over, every step recorded, no workload running.
	done   bool
	ends   time.Time
	csSum  float64
	csN    int
	last   float64
	result map[int]loadpanel.Result
}

func newDemoState(o Options) *demoState {
	step := o.DemoStep
	if step <= 0 {
		step = 10 * time.Second
	}
	return &demoState{now: time.Now, step: step, result: map[int]loadpanel.Result{}}
}

func (d *demoState) init() tea.Cmd { return d.timer() }

func (d *demoState) timer() tea.Cmd {
	d.gen++
	d.ends = d.now().Add(d.step)
	gen := d.gen
	return tea.Tick(d.step, func(time.Time) tea.Msg { return demoMsg{gen: gen} })
}

// demoGo records the current step's result and moves to step i.
func (m Model) demoGo(i int) (tea.Model, tea.Cmd) {
	d := m.demo
	if i < 0 || (d.done && i >= len(demoSteps)) {
		return m, nil
	}
	if d.done {
		// Back from the end: run the step again; its row is replaced.
		i = len(demoSteps) - 1
	} else {
		m.demoRecord()
	}
	if i >= len(demoSteps) {
		// The tour is over: its last row is in, its workload stopped. Nothing
		// is left spinning, so the results can stay up for questions.
		m.finishDemo()
		return m, nil
	}
	if m.load != nil {
		m.stopLoad()
		m.table.SetLoad(nil)
	}
	d.cur, d.csSum, d.csN, d.held, d.done = i, 0, 0, false, false
	if m.load != nil {
		m.load.err = ""
	}
	s := demoSteps[i]
	if s.mode != "" && m.load != nil {
		m.startLoad(s.mode, s.pin)
	}
	m.layout()
	return m, d.timer()
}

// finishDemo ends the tour after the last step was recorded.
func (m Model) finishDemo() {
	d := m.demo
	if m.load != nil {
		m.stopLoad()
		m.table.SetLoad(nil)
	}
	d.done, d.held = true, false
	d.gen++ // a timer still set for the last step must not fire into the end
	m.layout()
}

// demoRecord keeps the figures of the step being left.
func (m Model) demoRecord() {
	d := m.demo
	r := loadpanel.Result{Step: demoSteps[d.cur].title}
	if d.csN > 0 {
		r.SystemCS, r.Sampled = d.csSum/float64(d.csN), true
	}
	if m.load != nil && m.load.running() {
		r.NsPerRoundTrip = m.load.progress.NsPerRoundTrip
		if sum, ok := m.stopLoad(); ok {
			r.NsPerRoundTrip, r.NsPerSwitch = sum.NsPerRoundTrip, sum.NsPerSwitch
		}
	}
	if d.csN > 0 || r.NsPerRoundTrip > 0 {
		d.result[d.cur] = r
	}
}

func (m Model) handleDemoKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd, bool) {
	d := m.demo
	switch {
	case key.Matches(k, m.keys.NextStep):
		next, cmd := m.demoGo(d.cur + 1)
		return next, cmd, true
	case key.Matches(k, m.keys.PrevStep):
		next, cmd := m.demoGo(d.cur - 1)
		return next, cmd, true
	case key.Matches(k, m.keys.Pause) && d.done:
		// Nothing to hold; space pauses sampling as usual.
		return m, nil, false
	case key.Matches(k, m.keys.Pause):
		d.held = !d.held
		if !d.held {
			return m, d.timer(), true
		}
		return m, nil, true
	}
	return m, nil, false
}

// demoSample adds a sample's system-wide rate to the current step.
func (m Model) demoSample() {
	if m.demo == nil || m.snap == nil || m.snap.System.NoRates != "" {
		// An interval without host rates is unknown, not 0 cs/s.
		return
	}
	m.demo.last = m.snap.System.ContextSwitchesPerSec
	m.demo.csSum += m.demo.last
	m.demo.csN++
}

func (m Model) demoView() *loadpanel.Demo {
	d := m.demo
	if d == nil {
		return nil
	}
	s := demoSteps[d.cur]
	v := &loadpanel.Demo{
		Step: d.cur, Steps: len(demoSteps), Title: s.title, Caption: s.caption,
		Held: d.held, SystemCS: d.last, Finished: d.done,
	}
	if d.done {
		v.Title = "finished"
		// The keys line says N runs the last step again and q quits.
		v.Caption = "Every step ran; its results are below, and nothing of ours runs now."
	}
	if !d.held && !d.done {
		v.Remaining = d.ends.Sub(d.now()).Round(time.Second).String()
	}
	busy, base := m.busyBaseline()
	for i := range demoSteps {
		if r, ok := d.result[i]; ok {
			if i == 0 && busy {
				r.Step = "baseline, host busy"
			}
			v.Results = append(v.Results, r)
		}
	}
	switch {
	case busy && d.cur == 0 && !d.done:
		// Said instead of a caption that calls this the machine's own
		// idle switching.
		v.Title = "baseline, host busy"
		v.Caption = fmt.Sprintf("The host is busy: %s cs/s with nothing of ours running, %s per CPU (an idle CPU does under %s). Every figure below includes that other work.",
			format.Thousands(base), format.Thousands(base/float64(m.snap.System.CPUs)), format.Thousands(busyPerCPU))
	case busy:
		// One line at 80 columns, so every result row still fits 80x24.
		v.Busy = fmt.Sprintf("The host is busy: baseline %s cs/s; every figure includes other work.", format.Thousands(base))
	}
	return v
}

// busyBaseline says whether the baseline step's mean rate (so far, while
// it runs) is above busyPerCPU per CPU, and the rate.
func (m Model) busyBaseline() (bool, float64) {
	d := m.demo
	base, ok := 0.0, false
	if r, done := d.result[0]; done && r.Sampled {
		base, ok = r.SystemCS, true
	} else if d.cur == 0 && !d.done && d.csN > 0 {
		base, ok = d.csSum/float64(d.csN), true
	}
	if !ok || m.snap == nil || m.snap.System.CPUs <= 0 {
		return false, 0
	}
	return base > busyPerCPU*float64(m.snap.System.CPUs), base
}
