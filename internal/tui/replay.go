package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
	"github.com/ctxtop/ctxtop/internal/tui/timectl"
)

// Replay is a recording to play instead of sampling: ctxtop replay.
type Replay interface {
	// Points describe every recorded sample, in order.
	Points() []timectl.Point
	// Rates are each sample's cs/s and in/s, for the header's history.
	Rates(i int) (cs, in float64)
	// Seek returns the snapshot of sample i as playing up to it gives it.
	// Calls may come from more than one goroutine.
	Seek(i int) (model.Snapshot, error)
	// Facts are the recording's host facts, shown instead of this host's.
	Facts() hostinfo.Facts
	// Interval is the recorded sampling interval.
	Interval() time.Duration
	// Note is what the viewer should know first (the recording came from
	// a host with a different CPU count, samples were lost), or "".
	Note() string
}

// Reporter is a Replay that can write the HTML report of its window
// (ctxtop report over the replay's range), returning what it wrote.
type Reporter interface {
	Report() (string, error)
}

// replayState is the root's replay: the time control and what it shows.
type replayState struct {
	src   Replay
	ctl   timectl.Model
	shown int
	gen   int
}

type (
	// replayTickMsg moves playback on; gen drops ticks from before a
	// pause or speed change.
	replayTickMsg struct{ gen int }
	// reportedMsg is a finished report: what was written, or why not.
	reportedMsg struct {
		what string
		err  error
	}
	// seekedMsg is a finished seek to pos.
	seekedMsg struct {
		pos  int
		snap model.Snapshot
		err  error
	}
)

func newReplayState(o Options, th theme.Theme) *replayState {
	if o.Replay == nil {
		return nil
	}
	ctl := timectl.New(th, o.Replay.Points(), o.Replay.Interval())
	ctl.SetNote(o.Replay.Note())
	return &replayState{src: o.Replay, ctl: ctl, shown: -1}
}

// replayInit shows the first sample at once and starts playing.
func (m Model) replayInit() tea.Cmd {
	return tea.Batch(m.seek(m.replay.ctl.Pos()), m.replayTick())
}

func (m Model) seek(pos int) tea.Cmd {
	src := m.replay.src
	return func() tea.Msg {
		s, err := src.Seek(pos)
		return seekedMsg{pos: pos, snap: s, err: err}
	}
}

func (m Model) replayTick() tea.Cmd {
	r := m.replay
	if !r.ctl.Playing() {
		return nil
	}
	gen := r.gen
	return tea.Tick(r.ctl.Period(), func(time.Time) tea.Msg { return replayTickMsg{gen: gen} })
}

func (m Model) handleReplay(msg tea.Msg) (tea.Model, tea.Cmd) {
	r := m.replay
	switch msg := msg.(type) {
	case replayTickMsg:
		if msg.gen != r.gen || !r.ctl.Playing() {
			return m, nil
		}
		if !r.ctl.Advance() {
			m.syncHeader()
			return m, nil
		}
		m.syncHeader()
		return m, tea.Batch(m.seek(r.ctl.Pos()), m.replayTick())
	case reportedMsg:
		if msg.err != nil {
			r.ctl.SetNote("report: " + msg.err.Error())
		} else {
			r.ctl.SetNote("wrote " + msg.what)
		}
		return m, nil
	case seekedMsg:
		// A later key may have moved on: only the latest seek is shown.
		if msg.pos != r.ctl.Pos() {
			return m, nil
		}
		if msg.err != nil {
			m.lastErr = msg.err
			return m, nil
		}
		m.lastErr = nil
		if r.shown < 0 || msg.pos != r.shown+1 {
			m.rewindHistory(msg.pos)
		}
		r.shown = msg.pos
		m.setSnapshot(msg.snap)
	}
	return m, nil
}

// rewindHistory makes the histories what playing up to pos would have
// left: the header's from the recording, the threads' empty.
func (m *Model) rewindHistory(pos int) {
	r := m.replay
	pts := r.ctl.Points()
	var cs, in []float64
	for i := max(pos-512, 0); i < pos; i++ {
		if pts[i].Rate {
			c, n := r.src.Rates(i)
			cs, in = append(cs, c), append(in, n)
		}
	}
	m.header.SetHistory(cs, in)
	m.hist = newThreadHistory()
}

// handleReplayKey takes the time keys; ok is false for every other key.
func (m Model) handleReplayKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd, bool) {
	r := m.replay
	if !r.ctl.Handles(k) {
		return m, nil, false
	}
	if r.ctl.IsReport(k) {
		rep, ok := r.src.(Reporter)
		if !ok {
			r.ctl.SetNote("no report of this replay")
			return m, nil, true
		}
		r.ctl.SetNote("writing the report…")
		// Off the update loop: an hour of samples takes a second or two.
		return m, func() tea.Msg {
			what, err := rep.Report()
			return reportedMsg{what, err}
		}, true
	}
	pos, playing, speed := r.ctl.Pos(), r.ctl.Playing(), r.ctl.Speed()
	r.ctl, _ = r.ctl.Update(k)
	var cmds []tea.Cmd
	if r.ctl.Pos() != pos {
		cmds = append(cmds, m.seek(r.ctl.Pos()))
	}
	if r.ctl.Playing() != playing || r.ctl.Speed() != speed {
		// A new chain of ticks at the new pace; the old one is dropped.
		r.gen++
		cmds = append(cmds, m.replayTick())
	}
	m.syncHeader()
	return m, tea.Batch(cmds...), true
}

func (m Model) replayHeight() int {
	if m.replay == nil || m.height < 3 {
		return 0
	}
	return 1
}

func (m Model) replayView() string {
	if m.replayHeight() == 0 {
		return ""
	}
	c := m.replay.ctl
	c.SetSize(m.width, 1)
	c.SetTheme(m.th)
	return c.View()
}
