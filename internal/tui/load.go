package tui

import (
	"fmt"
	"os"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/loadpanel"
)

// Loader runs ctxtop's own ping-pong workloads.
type Loader interface {
	// Modes are the workload kinds, in the order m cycles through them.
	Modes() []LoadMode
	// AllowedCPUs are the CPUs this process may pin to.
	AllowedCPUs() []int
	// Start runs mode with its two sides on cpus: nil unpinned, [c] both
	// on c, [a, b] one on each.
	Start(mode string, cpus []int) (LoadRun, error)
}

// LoadMode is what the panel shows of a workload kind and how p pins it.
type LoadMode struct {
	Name string
	// Title is a few words on what runs.
	Title string
	// Threads is how many threads a threaded mode runs (pool, poll): its
	// figures are units per second, not a round trip's cost. 0 for a mode
	// of ping-pong pairs.
	Threads int
	// MaxCPUs is how many CPUs p may pin it to: 0 (it takes no pinning),
	// 1 (one thread) or 2 (one per side).
	MaxCPUs int
	// Unit and Units name what it counts: "round trip", "round trips".
	Unit, Units string
}

// label is the mode as the panel names it: a threaded mode with its
// threads.
func (md LoadMode) label() string {
	if md.Threads > 0 {
		return fmt.Sprintf("%s, %d threads", md.Name, md.Threads)
	}
	return md.Name
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
	modes    []LoadMode
	cpus     []int
	mode     int
	pin      int
	visible  bool
	run      LoadRun
	progress LoadProgress
	tids     map[int]bool
	err      string
	// note says why the last key did nothing (p on a mode that takes no
	// pinning); the next load key clears it.
	note     string
	switches float64
	// wake is the run's own wake-up figures from the last snapshot (see
	// loadWake), worked out once a sample rather than at every frame.
	wake *loadpanel.Wake
}

func newLoadState(o Options) *loadState {
	if o.Load == nil || o.Replay != nil {
		// A replay has none: a load would run on this host and mix its
		// live figures with the recorded ones.
		return nil
	}
	l := &loadState{loader: o.Load, modes: o.Load.Modes(), cpus: o.Load.AllowedCPUs()}
	for i, md := range l.modes {
		if md.Name == "futex" {
			l.mode = i
		}
	}
	return l
}

func (l *loadState) running() bool { return l != nil && l.run != nil }

func (l *loadState) modeName() string { return l.current().Name }

// current is the mode m has selected.
func (l *loadState) current() LoadMode {
	if len(l.modes) == 0 {
		return LoadMode{Name: "-"}
	}
	return l.modes[l.mode]
}

// lookup is the mode a spec ("pool threads=4x") runs; one the loader does
// not list is pinned as asked, and the loader may refuse it.
func (l *loadState) lookup(spec string) LoadMode {
	name, _, _ := strings.Cut(spec, " ")
	for _, md := range l.modes {
		if md.Name == name {
			return md
		}
	}
	return LoadMode{Name: name, MaxCPUs: 2}
}

// pinCPUs is the CPU set for a pinning level, limited by what is allowed
// and what md takes.
func (l *loadState) pinCPUs(md LoadMode, pin int) []int {
	switch {
	case pin == pinNone || len(l.cpus) == 0 || md.MaxCPUs == 0:
		return nil
	case pin == pinTwo && len(l.cpus) >= 2 && md.MaxCPUs >= 2:
		return []int{l.cpus[0], l.cpus[1]}
	}
	return []int{l.cpus[0]}
}

func pinLabel(md LoadMode, cpus []int) string {
	switch {
	case md.MaxCPUs == 0:
		return "no pinning"
	case len(cpus) == 0:
		return "unpinned"
	case len(cpus) == 1 && md.MaxCPUs == 1:
		return fmt.Sprintf("on CPU %d", cpus[0]) // one thread: no "both"
	case len(cpus) == 1:
		return fmt.Sprintf("both on CPU %d", cpus[0])
	}
	return fmt.Sprintf("CPUs %d and %d", cpus[0], cpus[1])
}

// nextPin is the level after pin for md: two CPUs only when md has a
// side for each and two are allowed.
func (l *loadState) nextPin(md LoadMode, pin int) int {
	switch pin {
	case pinNone:
		return pinOne
	case pinOne:
		if len(l.cpus) >= 2 && md.MaxCPUs >= 2 {
			return pinTwo
		}
	}
	return pinNone
}

// noPinning is what p says on a mode that takes no pinning, in the words
// ctxtop load refuses --cpus with.
func noPinning(md LoadMode) string {
	return md.Name + " mode cannot be pinned: it shows what the scheduler does with its threads"
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
	run, err := l.loader.Start(mode, l.pinCPUs(l.lookup(mode), pin))
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
	note := ""
	switch {
	case key.Matches(k, m.keys.Load):
		l.visible = !l.visible
	case key.Matches(k, m.keys.Pin) && (l.visible || l.running()):
		md := l.current()
		if md.MaxCPUs == 0 {
			// Say so: a p that silently did nothing reads as a broken key.
			note = noPinning(md)
			break
		}
		// Live: a speaker shows the jump without leaving the screen.
		l.pin = l.nextPin(md, l.pin)
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
	l.note = note
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
		md := l.current()
		st = loadpanel.State{
			Mode: md.label(), Title: md.Title, Pinning: pinLabel(md, l.pinCPUs(md, l.pin)), Running: l.running(),
			Elapsed:        l.progress.Elapsed.Truncate(100 * time.Millisecond).String(),
			NsPerRoundTrip: l.progress.NsPerRoundTrip, RoundTrips: l.progress.RoundTrips,
			Threads: md.Threads, Unit: md.Unit, Units: md.Units,
			LoadSwitches: l.switches, Err: l.err, Note: l.note, Wake: l.wake,
		}
	}
	p.SetState(st, m.demoView())
	return p
}
