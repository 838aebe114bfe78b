package tui

import (
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/keys"
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
	// Recorded says whether the recording holds wake-ups (record
	// --wakeups) and stacks (record --stacks).
	Recorded() (wakeups, stacks bool)
}

// What a replay's views say where the recording holds no tracer's figures:
// there is no tracer to wait for, only a recorder to run again.
const (
	noWakeupsRecorded  = "this recording has no wake-ups (record with --wakeups)"
	noWakeupsThere     = "no wake-ups recorded for this interval"
	noStacksRecorded   = "none in this recording (record with --stacks)"
	noStacksThere      = "none recorded for this interval"
	noPerCPUSchedThere = "not recorded for this interval"
	// noLoadInReplay is short: it shares the time bar's line.
	noLoadInReplay = "L: no live load in a replay"
)

// recordedTracers are a replayed snapshot's wake-ups and stacks for the
// views, with the reason in place of figures the recording does not hold;
// sched is the wake-ups for the per-CPU view, which needs the per-CPU
// counters too.
func (r *replayState) recordedTracers(w *model.Wakeups, st *model.Stacks) (wake, sched *model.Wakeups, stacks *model.Stacks) {
	hasW, hasS := r.src.Recorded()
	switch {
	case w == nil && hasW:
		w = &model.Wakeups{Unavailable: noWakeupsThere}
	case w == nil:
		w = &model.Wakeups{Unavailable: noWakeupsRecorded}
	}
	sched = w
	if w.Unavailable == "" && len(w.PerCPU) == 0 {
		sched = &model.Wakeups{Unavailable: noPerCPUSchedThere}
	}
	switch {
	case st == nil && hasS:
		st = &model.Stacks{Unavailable: noStacksThere}
	case st == nil:
		st = &model.Stacks{Unavailable: noStacksRecorded}
	}
	return w, sched, st
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

// handleReplayKey takes the time keys, and L, which says why there is no
// load panel; ok is false for every other key.
func (m Model) handleReplayKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd, bool) {
	r := m.replay
	if key.Matches(k, m.keys.Load) {
		// A load would run on this host and put its live figures
		// among the recorded ones.
		r.ctl.SetNote(noLoadInReplay)
		return m, nil, true
	}
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

// replayHelpKeys is km as a replay's help lists it: L marked as live
// only; left out, the load panel's and the demo's keys and the actions on
// live processes (signal, affinity, nice), which do nothing here, and
// those the time keys take (space, + and -, ← and →).
func replayHelpKeys(km keys.Map) keys.Map {
	km.Load.SetHelp(km.Load.Help().Key, "load: live only")
	for _, b := range []*key.Binding{&km.LoadMode, &km.LoadStart, &km.Pin, &km.NextStep, &km.PrevStep, &km.Pause, &km.Faster, &km.Slower,
		&km.Signal, &km.Affinity, &km.NiceDown, &km.NiceUp, &km.Fold, &km.Unfold} {
		b.SetEnabled(false)
	}
	return km
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
