package tui

import (
	"fmt"
	"os"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/loadpanel"
)

// Loader runs ctxtop's own ping-pong workloads.
type Loader interface {
	// Modes are the workload kinds, in the order m cycles through them.
	Modes() []string
	// AllowedCPUs are the CPUs this process may pin to.
	AllowedCPUs() []int
	// Start runs mode with its two sides on cpus: nil unpinned, [c] both
	// on c, [a, b] one on each.
	Start(mode string, cpus []int) (LoadRun, error)
}

// LoadRun is one running workload.
type LoadRun interface {
	Progress() LoadProgress
	Stop() LoadSummary
	Done() <-chan struct{}
}

// LoadProgress is a running workload's live state.
type LoadProgress struct {
	Elapsed        time.Duration
	RoundTrips     uint64
	NsPerRoundTrip float64
	TIDs           []int
	ChildPID       int
}

// LoadSummary is a stopped workload's result.
type LoadSummary struct {
	NsPerRoundTrip float64
	NsPerSwitch    float64
}

type (
	loadMsg struct{}
	// demoMsg ends a demo step; gen drops timers of steps already left.
	demoMsg struct{ gen int }
)

// Pinning levels p cycles through.
const (
	pinNone = iota
	pinOne
	pinTwo
)

type loadState struct {
	loader   Loader
	modes    []string
	cpus     []int
	mode     int
	pin      int
	visible  bool
	run      LoadRun
	progress LoadProgress
	tids     map[int]bool
	err      string
	switches float64
	// wake is the run's own wake-up figures from the last snapshot (see
	// loadWake), worked out once a sample rather than at every frame.
	wake *loadpanel.Wake
}

func newLoadState(o Options) *loadState {
	if o.Load == nil {
		return nil
	}
	l := &loadState{loader: o.Load, modes: o.Load.Modes(), cpus: o.Load.AllowedCPUs()}
	for i, md := range l.modes {
		if md == "futex" {
			l.mode = i
		}
	}
	return l
}

func (l *loadState) running() bool { return l != nil && l.run != nil }

func (l *loadState) modeName() string {
	if len(l.modes) == 0 {
		return "-"
	}
	return l.modes[l.mode]
}

// pinCPUs is the CPU set for a pinning level, limited by what is allowed.
func (l *loadState) pinCPUs(pin int) []int {
	switch {
	case pin == pinNone || len(l.cpus) == 0:
		return nil
	case pin == pinTwo && len(l.cpus) >= 2:
		return []int{l.cpus[0], l.cpus[1]}
	}
	return []int{l.cpus[0]}
}

func pinLabel(cpus []int) string {
	switch len(cpus) {
	case 0:
		return "unpinned"
	case 1:
		return fmt.Sprintf("both on CPU %d", cpus[0])
	}
	return fmt.Sprintf("CPUs %d and %d", cpus[0], cpus[1])
}

// nextPin is the level after pin; two CPUs only when two are allowed.
func (l *loadState) nextPin(pin int) int {
	switch pin {
	case pinNone:
		return pinOne
	case pinOne:
		if len(l.cpus) >= 2 {
			return pinTwo
		}
	}
	return pinNone
}

// ownRates are the load threads' CPU% and switches/s inside this process,
// which the process-wide self figure includes.
func (l *loadState) ownRates(s *model.Snapshot) (cpu, cs float64) {
	self := os.Getpid()
	for _, t := range s.Threads {
		if t.PID == self && l.tids[t.TID] {
			cpu += t.CPUPercent
			cs += t.TotalPerSec()
		}
	}
	return cpu, cs
}

// start runs the selected mode and pinning, replacing any run.
func (m *Model) startLoad(mode string, pin int) {
	l := m.load
	m.stopLoad()
	// The workload runs in a process of its own: the monitor keeps its one
	// P, and its threads stay as quiet as when idle.
	run, err := l.loader.Start(mode, l.pinCPUs(pin))
	if err != nil {
		l.err = err.Error()
		return
	}
	l.err, l.run, l.pin = "", run, pin
	l.progress = run.Progress()
	l.markTIDs()
	m.table.SetLoad(l.isLoad)
}

// stopLoad stops a run and returns its summary.
func (m Model) stopLoad() (LoadSummary, bool) {
	l := m.load
	if !l.running() {
		return LoadSummary{}, false
	}
	sum := l.run.Stop()
	l.run, l.tids, l.switches, l.wake = nil, nil, 0, nil
	return sum, true
}

func (l *loadState) markTIDs() {
	l.tids = make(map[int]bool, len(l.progress.TIDs))
	for _, t := range l.progress.TIDs {
		l.tids[t] = true
	}
}

func (l *loadState) isLoad(pid, tid int) bool {
	if l.progress.ChildPID > 0 && pid == l.progress.ChildPID {
		return true
	}
	return tid > 0 && l.tids[tid]
}

// loadAfterSample refreshes the run's figures once per sample: no timer of
// its own, so a run adds no wake-ups to the monitor.
func (m Model) loadAfterSample() tea.Cmd {
	l := m.load
	if !l.running() {
		return nil
	}
	select {
	case <-l.run.Done():
		m.stopLoad()
		m.table.SetLoad(nil)
		return nil
	default:
	}
	l.progress = l.run.Progress()
	l.markTIDs()
	l.switches = 0
	if m.snap != nil {
		for _, t := range m.snap.Threads {
			if l.isLoad(t.PID, t.TID) {
				l.switches += t.TotalPerSec()
			}
		}
	}
	return nil
}

func (m Model) handleLoad(msg tea.Msg) (tea.Model, tea.Cmd) {
	if d, ok := msg.(demoMsg); ok && m.demo != nil && d.gen == m.demo.gen && !m.demo.held {
		return m.demoGo(m.demo.cur + 1)
	}
	return m, nil
}

func (m Model) handleLoadKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd, bool) {
	l := m.load
	switch {
	case key.Matches(k, m.keys.Load):
		l.visible = !l.visible
	case key.Matches(k, m.keys.Pin) && (l.visible || l.running()):
		// Live: a speaker shows the jump without leaving the screen.
		l.pin = l.nextPin(l.pin)
		if l.running() {
			m.startLoad(l.modeName(), l.pin)
		}
	case key.Matches(k, m.keys.LoadMode) && l.visible && len(l.modes) > 0:
		l.mode = (l.mode + 1) % len(l.modes)
		if l.running() {
			m.startLoad(l.modeName(), l.pin)
		}
	case key.Matches(k, m.keys.LoadStart) && l.visible:
		if l.running() {
			m.stopLoad()
			m.table.SetLoad(nil)
		} else {
			m.startLoad(l.modeName(), l.pin)
		}
	default:
		return m, nil, false
	}
	m.layout()
	return m, nil, true
}

func (m Model) panelHeight() int {
	if !m.panelShown() {
		return 0
	}
	return m.panelModel().Height()
}

// panelShown: the help screen takes the whole body, so the legend fits.
func (m Model) panelShown() bool {
	return m.view != viewHelp && (m.demo != nil || (m.load != nil && m.load.visible))
}

func (m Model) panelView() string {
	if !m.panelShown() {
		return ""
	}
	return m.panelModel().View()
}

// panelModel builds the panel from the current state; it is cheap, and
// building it on demand keeps one copy of the truth.
func (m Model) panelModel() loadpanel.Model {
	p := loadpanel.New(m.th)
	// The table keeps at least a header and a few rows.
	room := max(m.height-m.header.Height()-1-5, 0)
	if m.demo == nil {
		room = min(room, 3) // a third line: the run's wake-ups
	}
	p.SetSize(m.width, room)
	l := m.load
	var st loadpanel.State
	if l != nil {
		st = loadpanel.State{
			Mode: l.modeName(), Pinning: pinLabel(l.pinCPUs(l.pin)), Running: l.running(),
			Elapsed:        l.progress.Elapsed.Truncate(100 * time.Millisecond).String(),
			NsPerRoundTrip: l.progress.NsPerRoundTrip, RoundTrips: l.progress.RoundTrips,
			LoadSwitches: l.switches, Err: l.err, Wake: l.wake,
		}
	}
	p.SetState(st, m.demoView())
	return p
}
