package tui

import (
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

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
	{"processes over pipes", "Two processes ping-pong a byte through pipes: the classic lmbench and perf bench sched pipe test.", "process", pinNone},
	{"goroutines", "Two goroutines over a channel: the Go runtime switches them without the kernel — no context switch at all.", "goroutine", pinNone},
}

type demoState struct {
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
	return &demoState{step: step, result: map[int]loadpanel.Result{}}
}

func (d *demoState) init() tea.Cmd { return d.timer() }

func (d *demoState) timer() tea.Cmd {
	d.gen++
	d.ends = time.Now().Add(d.step)
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
	if m.demo == nil || m.snap == nil {
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
		v.Caption = "Every step ran; its results are below and nothing of ours runs now. N runs the last step again, q quits."
	}
	if !d.held && !d.done {
		v.Remaining = time.Until(d.ends).Round(time.Second).String()
	}
	for i := range demoSteps {
		if r, ok := d.result[i]; ok {
			v.Results = append(v.Results, r)
		}
	}
	return v
}
