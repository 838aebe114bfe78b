package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/ctxtop/ctxtop/internal/model"
)

// LoadStarter starts a workload of the given mode on cpus (nil: unpinned).
type LoadStarter func(mode string, cpus []int) (LoadRun, error)

// LoadRun is one running workload.
type LoadRun interface {
	Progress() LoadProgress
	Stop() LoadSummary
	Done() <-chan struct{}
}

// LoadProgress is a running workload's live state.
type LoadProgress struct {
	NsPerRoundTrip float64
	RoundTrips     uint64
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
	demoMsg struct{}
)

type loadState struct{}

type demoState struct{}

func newLoadState(o Options) *loadState {
	if o.Load == nil {
		return nil
	}
	return &loadState{}
}

func newDemoState(Options) *demoState { return &demoState{} }

func (d *demoState) init() tea.Cmd { return nil }

func (l *loadState) running() bool { return false }

func (l *loadState) ownRates(*model.Snapshot) (cpu, cs float64) { return 0, 0 }

func (m Model) stopLoad() {}

func (m Model) panelHeight() int { return 0 }

func (m Model) panelView() string { return "" }

func (m Model) loadAfterSample() tea.Cmd { return nil }

func (m Model) handleLoad(tea.Msg) (tea.Model, tea.Cmd) { return m, nil }

func (m Model) handleLoadKey(tea.KeyPressMsg) (tea.Model, tea.Cmd, bool) { return m, nil, false }

func (m Model) handleDemoKey(tea.KeyPressMsg) (tea.Model, tea.Cmd, bool) { return m, nil, false }
