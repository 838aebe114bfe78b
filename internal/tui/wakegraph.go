package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/loadpanel"
	"github.com/ctxtop/ctxtop/internal/tui/wakegraph"
)

// WakeupSwitch turns the wake-up tracer on and off. Want records the wish
// at once; Apply, which may take a while to load the programs, runs off the
// event loop and applies the latest wish.
type WakeupSwitch interface {
	Want(on bool)
	// WantPerCPU adds the per-CPU switch and migration counters, which
	// cost every context switch, while the tracer is on.
	WantPerCPU(on bool)
	Apply()
}

// wakeState is the root's part of the wake-up graph.
type wakeState struct {
	view wakegraph.Model
	// on is what the tracer was last asked to be; perCPU whether with the
	// per-CPU counters.
	on, perCPU bool
	// wakee is the thread whose detail the wake-up view opened; zero when
	// the detail follows the table.
	wakee wakegraph.OpenMsg
}

// handleWakeupKey is W, and the wake-up view's own keys while it is open.
func (m Model) handleWakeupKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd, bool) {
	km := m.keys
	switch {
	case key.Matches(k, km.Wakeups) && !m.wake.view.Filtering():
		if m.view == viewWakeups {
			m.view = viewTable
		} else {
			m.view, m.wake.wakee = viewWakeups, wakegraph.OpenMsg{}
		}
		return m, nil, true
	case m.view == viewWakeups && m.wake.view.Handles(k):
		var cmd tea.Cmd
		m.wake.view, cmd = m.wake.view.Update(k)
		return m, cmd, true
	case m.view == viewDetail && m.wake.wakee.TID != 0:
		if key.Matches(k, km.Back) {
			m.view, m.wake.wakee = viewWakeups, wakegraph.OpenMsg{}
			return m, nil, true
		}
		if key.Matches(k, km.Up, km.Down, km.PageUp, km.PageDown, km.Home, km.End) {
			// Moving goes back to following the table.
			m.wake.wakee = wakegraph.OpenMsg{}
		}
	}
	return m, nil, false
}

// openWakee shows the detail of the thread a wake-up row woke.
func (m Model) openWakee(o wakegraph.OpenMsg) Model {
	if o.TID <= 0 {
		return m
	}
	m.wake.wakee = o
	m.view = viewDetail
	m.shown = detailTarget{pid: o.PID, tid: o.TID}
	m.syncDetail()
	return m
}

// underView is the view on screen, or the one help was opened over.
func (m Model) underView() view {
	if m.view == viewHelp {
		return m.prevView
	}
	return m.view
}

// tracerWanted: the programs run only while something shows their figures,
// so the idle monitor's own noise is what it was without them.
func (m Model) tracerWanted() bool {
	v := m.underView()
	return v == viewWakeups || v == viewPerCPU || v == viewDetail || m.load.running()
}

// perCPUWanted: the per-CPU counters run at every context switch, so only
// while the per-CPU view shows them.
func (m Model) perCPUWanted() bool { return m.underView() == viewPerCPU }

// withTracer asks for the tracer on or off after anything that may change
// the view or start a load.
func (m Model) withTracer(cmd tea.Cmd) (tea.Model, tea.Cmd) {
	cmd = m.syncStacks(cmd)
	sw := m.opts.Wakeups
	want, perCPU := m.tracerWanted(), m.perCPUWanted()
	if sw == nil || want == m.wake.on && perCPU == m.wake.perCPU {
		return m, cmd
	}
	m.wake.on, m.wake.perCPU = want, perCPU
	sw.WantPerCPU(perCPU)
	sw.Want(want)
	if !want {
		m.wake.view.SetWakeups(nil)
		m.detail.SetWakeups(nil)
		m.percpu.SetSched(nil)
		if m.load != nil {
			m.load.wake = nil
		}
	}
	return m, tea.Batch(cmd, func() tea.Msg { sw.Apply(); return nil })
}

// setWakeups hands a snapshot's wake-up graph to the views that show it.
func (m *Model) setWakeups(s *model.Snapshot) {
	if m.replay != nil {
		// The recording's figures, whatever is on screen: no tracer.
		w, sched, st := m.replay.recordedTracers(s.Wakeups, s.Stacks)
		m.detail.SetStacks(st)
		m.wake.view.SetWakeups(w)
		m.detail.SetWakeups(w)
		m.percpu.SetSched(sched)
		return
	}
	m.detail.SetStacks(s.Stacks)
	if m.stacksOn {
		m.opts.Stacks.Focus(m.detail.TID())
	}
	w := s.Wakeups
	if !m.wake.on {
		w = nil
	}
	m.wake.view.SetWakeups(w)
	m.detail.SetWakeups(w)
	m.percpu.SetSched(w)
	if m.load != nil {
		m.load.wake = m.loadWake()
	}
}

// loadWake is the running load's own pairs: how many of its wake-ups
// crossed CPUs and how long its threads waited to run, with the IPIs the
// cross-CPU ones cost. Nil when there are no figures.
func (m Model) loadWake() *loadpanel.Wake {
	l := m.load
	if !l.running() || m.snap == nil || m.snap.Wakeups == nil || !m.wake.on {
		return nil
	}
	w := m.snap.Wakeups
	if w.Unavailable != "" {
		return &loadpanel.Wake{Note: w.Unavailable}
	}
	f, ok := w.Among(l.isLoad)
	if !ok {
		return nil
	}
	return &loadpanel.Wake{WakeFigures: f, ReschedIPIsPerSec: m.snap.System.ReschedIPIsPerSec}
}
