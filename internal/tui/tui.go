// Package tui is ctxtop's live monitor. The root model only dispatches:
// keys, samples and resizes go to short handlers, drawing to the component
// packages beneath this one.
package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pace"
	"github.com/ctxtop/ctxtop/internal/tui/detail"
	"github.com/ctxtop/ctxtop/internal/tui/filter"
	"github.com/ctxtop/ctxtop/internal/tui/header"
	"github.com/ctxtop/ctxtop/internal/tui/help"
	"github.com/ctxtop/ctxtop/internal/tui/keys"
	"github.com/ctxtop/ctxtop/internal/tui/percpu"
	"github.com/ctxtop/ctxtop/internal/tui/table"
	"github.com/ctxtop/ctxtop/internal/tui/textutil"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
	"github.com/ctxtop/ctxtop/internal/tui/timectl"
	"github.com/ctxtop/ctxtop/internal/tui/wakegraph"
)

// Source produces one Snapshot per call, with rates since the previous
// call. Calls never overlap.
type Source interface {
	Next() (model.Snapshot, error)
}

type view int

const (
	viewTable view = iota
	viewDetail
	viewPerCPU
	viewHelp
	viewWakeups
	// viewColumns is the panel where the table's columns are chosen.
	viewColumns
)

// Intervals are the refresh steps + and - move through.
var intervals = []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second}

type (
	// tickMsg asks for a sample; gen drops ticks scheduled before a
	// resume, so two never run at once.
	tickMsg struct{ gen int }
	// sampleMsg carries a finished sample back to Update.
	sampleMsg struct {
		snap model.Snapshot
		err  error
	}
)

// Model is the root model.
type Model struct {
	opts          Options
	th            theme.Theme
	keys          keys.Map
	width, height int

	header header.Model
	table  table.Model
	detail detail.Model
	percpu percpu.Model
	help   help.Model
	// colCursor is the columns panel's cursor; the panel itself is built
	// when drawn (columnsPanel): a copy of its theme and keys in this
	// model, which every handler copies, cost 100 KB of stack maps.
	colCursor int
	wake      wakeState
	// stacksOn: the stack tracer was asked on (see syncStacks).
	stacksOn bool
	// shown is the thread the detail view shows. It stays on that thread,
	// idle or exited, until the user moves to another: following the
	// table's selection would put another thread's figures under the
	// title as soon as its row left the table.
	shown detailTarget

	view      view
	prevView  view
	filtering bool
	paused    bool
	interval  time.Duration
	tickGen   int
	inFlight  bool
	// pace places the samples on a grid of ticks, as batch and record
	// mode's loop does; taken is when the last sample began, which no
	// tick comes closer to than pace.MinInterval.
	pace  pace.Pacer
	taken time.Time
	// nextTick is when the tick last scheduled fires.
	nextTick time.Time

	snap    *model.Snapshot
	lastErr error
	exitErr error

	hist    threadHistory
	samples int
	load    *loadState
	demo    *demoState
	// replay is ctxtop replay's time control; nil when live.
	replay *replayState

	// prompt is an action waiting on the user (actions.go); status what
	// the last one did.
	prompt prompt
	status statusLine
	// jvm is what the detail view's process, when a JVM, lacks.
	jvm jvmState
}

// detailTarget is the detail view's thread, and when it exited.
type detailTarget struct {
	pid, tid int
	exit     detail.Exit
}

// New builds the root model. host and kernel are shown in the header.
func New(o Options, host, kernel string) Model {
	th := theme.New(o.NoColor, true)
	km := keys.New()
	if o.Replay != nil {
		f := o.Replay.Facts()
		host, kernel = f.Hostname, f.Kernel
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	m := Model{
		opts:     o,
		th:       th,
		keys:     km,
		header:   header.New(th, host, kernel, o.Version),
		table:    table.New(th, km, o.HotThreshold),
		detail:   detail.New(th),
		percpu:   percpu.New(th),
		help:     help.New(th, km),
		wake:     wakeState{view: wakegraph.New(th, km)},
		interval: o.Interval,
		hist:     newThreadHistory(),
	}
	// The source took its baseline as it was made, just before.
	m.taken = time.Now()
	m.pace = pace.New(o.Interval, m.taken)
	m.load = newLoadState(o)
	m.replay = newReplayState(o, th)
	if m.replay != nil {
		m.help = help.New(th, replayHelpKeys(km))
		m.help.SetExtra("replay  (↑/↓ still move the selection)", timectl.Keys().HelpList())
	}
	if o.Demo {
		m.demo = newDemoState(o)
		m.help.SetExtra("demo", km.DemoHelp())
	}
	if o.HidePID != "" {
		m.table.SetUnattributedWhy(model.UnattributedWhyHidden)
	}
	m.applySettings(o.Settings)
	if o.SettingsNote != "" {
		m.setStatus(o.SettingsNote, nil)
	}
	m.syncHeader()
	return m
}

// Init schedules the first sample one interval from now: the source took
// its baseline when it was made, and a rate over a shorter span is noise.
func (m Model) Init() tea.Cmd {
	if m.replay != nil {
		return m.replayInit()
	}
	cmds := []tea.Cmd{m.tick()}
	if m.demo != nil {
		cmds = append(cmds, m.demo.init())
	}
	return tea.Batch(cmds...)
}

// Update dispatches a message to its handler.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		return m.handleResize(msg.Width, msg.Height), nil
	case tea.KeyPressMsg:
		next, cmd := m.handleKey(msg)
		return next.(Model).withTracer(cmd)
	case tea.MouseClickMsg, tea.MouseWheelMsg:
		m.handleMouse(msg.(tea.MouseMsg))
		return m, nil
	case wakegraph.OpenMsg:
		return m.openWakee(msg).withTracer(nil)
	case tickMsg:
		return m.handleTick(msg)
	case sampleMsg:
		// A load that ended by itself no longer needs the tracer.
		next, cmd := m.handleSample(msg)
		return next.(Model).withTracer(cmd)
	case tea.BackgroundColorMsg:
		return m.setTheme(theme.New(m.opts.NoColor, msg.IsDark())), nil
	case loadMsg, demoMsg:
		next, cmd := m.handleLoad(msg)
		return next.(Model).withTracer(cmd)
	case replayTickMsg, seekedMsg, reportedMsg:
		return m.handleReplay(msg)
	case jvmAskedMsg:
		m.handleJVMAsked(msg)
		return m, nil
	}
	return m, nil
}

// tick schedules the next sample on the pacer's grid: a tick a slow
// sample made it miss is skipped, never fired late, and none comes sooner
// than MinInterval after the last sample began.
func (m *Model) tick() tea.Cmd {
	gen := m.tickGen
	m.nextTick = m.pace.Next(time.Now(), m.taken)
	return tea.Tick(time.Until(m.nextTick), func(time.Time) tea.Msg { return tickMsg{gen: gen} })
}

// sample runs Source.Next off the event loop; its result comes back as a
// message, so no goroutine touches the model.
func (m Model) sample() tea.Cmd {
	src := m.opts.Source
	return func() tea.Msg {
		s, err := src.Next()
		return sampleMsg{snap: s, err: err}
	}
}

func (m Model) handleTick(msg tickMsg) (tea.Model, tea.Cmd) {
	if msg.gen != m.tickGen || m.paused || m.inFlight {
		return m, nil
	}
	m.inFlight = true
	m.taken = time.Now()
	return m, m.sample()
}

func (m Model) handleSample(msg sampleMsg) (tea.Model, tea.Cmd) {
	m.inFlight = false
	m.expireStatus()
	if msg.err != nil {
		// Without a classifier every error ends the monitor, as in batch
		// mode: the sampler already tolerates tasks that come and go.
		if m.opts.IsFatal == nil || m.opts.IsFatal(msg.err) {
			m.exitErr = msg.err
			return m, tea.Quit
		}
		// A failed pass is shown and retried next tick, as top does.
		m.lastErr = msg.err
	} else {
		m.lastErr = nil
		m.setSnapshot(msg.snap)
	}
	var cmd tea.Cmd
	if !m.paused {
		m.tickGen++
		cmd = m.tick()
	}
	m.demoSample()
	return m, tea.Batch(cmd, m.loadAfterSample())
}

func (m *Model) setSnapshot(s model.Snapshot) {
	m.snap = &s
	m.samples++
	m.hist.add(m.samples, &s, m.detail.TID())
	m.header.SetSnapshot(m.snap)
	m.table.SetSnapshot(m.snap)
	m.percpu.SetSnapshot(m.snap)
	m.setWakeups(m.snap)
	m.noteExit()
	m.syncDetail()
}

// noteExit marks the detail's thread exited when the snapshot says it
// went in its interval, and unmarks it when the snapshot is from before
// the exit (a replay sought back) or shows it running again.
func (m *Model) noteExit() {
	sh, s := &m.shown, m.snap
	if sh.tid == 0 {
		return
	}
	if sh.exit.Gone() && s.Time.Before(sh.exit.By) {
		sh.exit = detail.Exit{}
	}
	for _, e := range s.Exited {
		switch {
		case e.TID == sh.tid && (e.PID == sh.pid || sh.pid == 0):
			sh.exit = detail.Exit{After: s.Time.Add(-s.Interval), By: s.Time, Process: e.Process}
			return
		case sh.exit.Gone() && e.PID == sh.pid && e.Process:
			// The process's zombie main thread, reaped after the
			// thread shown went with the rest: it was the process's end.
			sh.exit.Process = true
			return
		}
	}
	if sh.exit.Gone() {
		for _, t := range s.Threads {
			if t.TID == sh.tid && t.PID == sh.pid {
				sh.exit = detail.Exit{} // unreadable for a while, not gone
			}
		}
	}
}

// The largest screen the monitor lays out and draws. ultraviolet keeps
// three cell buffers of the terminal's size at about 330 bytes a cell, and
// never gives them back: a 3000x1000 terminal cost 1.1 GB, kept after
// shrinking. Past these sizes the rest of the terminal stays blank; more
// than 500 rows or 1000 columns of table show nothing a reader could use.
const (
	maxWidth  = 1000
	maxHeight = 500
)

// clampSize is the size the monitor uses for a terminal of w x h cells.
func clampSize(w, h int) (int, int) { return min(w, maxWidth), min(h, maxHeight) }

func (m Model) handleResize(w, h int) Model {
	m.width, m.height = clampSize(w, h)
	m.layout()
	return m
}

func (m *Model) layout() {
	m.syncHeader()
	m.header.SetSize(m.width, m.height)
	body := max(m.height-m.header.Height()-1-m.panelHeight()-m.replayHeight(), 0)
	m.table.SetSize(m.width, body)
	m.detail.SetSize(m.width, body)
	m.percpu.SetSize(m.width, body)
	m.help.SetSize(m.width, body)
	m.wake.view.SetSize(m.width, body)
}

func (m Model) setTheme(th theme.Theme) Model {
	m.th = th
	m.header.SetTheme(th)
	m.table.SetTheme(th)
	m.detail.SetTheme(th)
	m.percpu.SetTheme(th)
	m.help.SetTheme(th)
	m.wake.view.SetTheme(th)
	return m
}

func (m *Model) syncHeader() {
	note := ""
	if m.table.Processes() {
		note = "processes"
	}
	if m.table.Cgroups() {
		note = "cgroups"
	}
	if cg := m.table.CgroupFilter(); cg != "" {
		note = strings.TrimSpace(note + " in " + model.CgroupName(cg))
	}
	if m.table.Grouped() {
		note = strings.TrimSpace(note + " grouped")
	}
	if m.table.TreeShown() {
		note = strings.TrimSpace(note + " tree")
	}
	if f := m.table.Filter(); f != "" && !m.filtering {
		note = strings.TrimSpace(note + " /" + f)
	}
	if m.opts.HidePID != "" {
		// Other users' processes are missing from every view: say why.
		note = strings.TrimSpace(note + " others hidden (hidepid)")
	}
	paused := m.paused
	if m.replay != nil {
		// The recording's clock is in the header; say it is not now.
		paused = !m.replay.ctl.Playing()
		note = strings.TrimSpace(fmt.Sprintf("replay %d× %s", m.replay.ctl.Speed(), note))
	}
	m.header.SetState(m.interval, paused, note)
}

func (m Model) handleKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if k.String() == "ctrl+c" {
		return m, tea.Quit
	}
	m.status = statusLine{} // said; the next key moves on
	if m.prompt.kind != promptNone {
		m.handlePromptKey(k)
		return m, nil
	}
	if m.filtering {
		return m.handleFilterKey(k), nil
	}
	if m.view == viewHelp {
		if m.help.Scrolls(k) {
			m.help, _ = m.help.Update(k)
			return m, nil
		}
		m.view = m.prevView
		m.layout()
		return m, nil
	}
	if m.view == viewColumns {
		m.handleColumnsKey(k)
		return m, nil
	}
	if key.Matches(k, m.keys.Columns) {
		// A view choice, not an action: a replay has it too.
		m.view = viewColumns
		m.colCursor = 0
		return m, nil
	}
	if next, cmd, ok := m.handleWakeupKey(k); ok {
		return next, cmd
	}
	if m.replay != nil {
		if next, cmd, ok := m.handleReplayKey(k); ok {
			return next, cmd
		}
	}
	if m.demo != nil {
		if next, cmd, ok := m.handleDemoKey(k); ok {
			return next, cmd
		}
	}
	if m.load != nil && m.view != viewDetail {
		if next, cmd, ok := m.handleLoadKey(k); ok {
			return next, cmd
		}
	}
	if m.handleHtopKey(k) {
		return m, nil
	}
	if m.view == viewDetail && key.Matches(k, m.keys.JVMPerfMap) {
		return m, m.askJVM()
	}
	km := m.keys
	switch {
	case key.Matches(k, km.Quit):
		return m, tea.Quit
	case key.Matches(k, km.Help):
		m.prevView, m.view = m.view, viewHelp
		m.help.Top()
		m.layout()
	case key.Matches(k, km.Pause):
		return m.togglePause()
	case key.Matches(k, km.Faster):
		return m.setInterval(stepInterval(m.interval, -1))
	case key.Matches(k, km.Slower):
		return m.setInterval(stepInterval(m.interval, +1))
	case key.Matches(k, km.Back):
		m.back()
	case key.Matches(k, km.PerCPU):
		if m.view == viewPerCPU {
			m.view = viewTable
		} else {
			m.view = viewPerCPU
		}
	case key.Matches(k, km.Filter):
		m.filtering = true
		m.view = viewTable
	case key.Matches(k, km.ToggleProcesses):
		m.table.CycleMode()
		m.view = viewTable
	case key.Matches(k, km.Group):
		m.table.SetGrouped(!m.table.Grouped())
	case key.Matches(k, km.SortLeft):
		m.table.SortBy(-1)
	case key.Matches(k, km.SortRight):
		m.table.SortBy(+1)
	case key.Matches(k, km.Reverse):
		m.table.Reverse()
	case key.Matches(k, km.Detail):
		m.openDetail()
	default:
		m.table, _ = m.table.Update(k)
		if m.view == viewDetail && key.Matches(k, km.Up, km.Down, km.PageUp, km.PageDown, km.Home, km.End) {
			m.showSelected()
		}
	}
	m.syncHeader()
	return m, nil
}

func (m Model) handleFilterKey(k tea.KeyPressMsg) Model {
	f, typing := filter.Edit(m.table.Filter(), k)
	m.filtering = typing
	m.table.SetFilter(f)
	m.syncHeader()
	return m
}

func (m *Model) back() {
	switch {
	case m.view != viewTable:
		m.view = viewTable
	case m.table.Filter() != "":
		m.table.SetFilter("")
	case m.table.CgroupFilter() != "":
		// Enter on a cgroup row got here: go back to that row, as Esc
		// from the detail goes back to the thread.
		cg := m.table.CgroupFilter()
		m.table.SetCgroupFilter("")
		m.table.SetCgroups(true)
		m.table.Select(table.CgroupKey(cg))
	}
}

// setInterval changes the refresh and reschedules at once: the tick already
// set for the old interval is dropped (its gen is stale), so going from 10 s
// to 250 ms does not leave the screen frozen until the 10 s tick fires.
func (m Model) setInterval(d time.Duration) (tea.Model, tea.Cmd) {
	changed := d != m.interval
	m.interval = d
	// The live source waits out the shortest interval it takes rates
	// over; it follows the refresh.
	if s, ok := m.opts.Source.(interface{ SetInterval(time.Duration) }); ok {
		s.SetInterval(d)
	}
	m.syncHeader()
	if !changed {
		return m, nil
	}
	// The grid of the new interval starts at the last sample, so the next
	// tick is one new interval after it; when that has passed already, the
	// grid starts now, with a sample at once.
	now := time.Now()
	late := now.Sub(m.taken) >= d
	m.pace = pace.New(d, m.taken)
	if late {
		m.pace = pace.New(d, now)
	}
	if m.paused || m.inFlight {
		// A sample under way schedules the next tick with the new interval.
		return m, nil
	}
	m.tickGen++
	if late {
		gen := m.tickGen
		m.nextTick = now
		return m, func() tea.Msg { return tickMsg{gen: gen} }
	}
	return m, m.tick()
}

func (m Model) togglePause() (tea.Model, tea.Cmd) {
	m.paused = !m.paused
	m.syncHeader()
	if m.paused || m.inFlight {
		return m, nil
	}
	// Resume samples at once, and the grid starts again from that sample;
	// ticks scheduled before the pause are stale.
	m.tickGen++
	m.inFlight = true
	m.taken = time.Now()
	m.pace = pace.New(m.interval, m.taken)
	return m, m.sample()
}

// openDetail shows the selected thread; on a process row it lists that
// process's threads instead, which is what one wants to look into next.
func (m *Model) openDetail() {
	r, ok := m.table.Selected()
	if !ok {
		return
	}
	if m.table.Cgroups() && r.Branch {
		// A namespace or a pod is many cgroups: it opens or closes.
		m.table.Fold(r.Folded)
		return
	}
	if m.table.Cgroups() {
		// A cgroup row opens its threads.
		m.table.SetProcesses(false)
		m.table.SetCgroupFilter(r.Cgroup)
		return
	}
	if m.table.Processes() || r.TID == 0 {
		if r.PID > 0 {
			m.table.SetProcesses(false)
			m.table.SetGrouped(false)
			m.table.SetFilter(fmt.Sprint(r.PID))
		}
		return
	}
	m.view = viewDetail
	m.showSelected()
}

// showSelected shows the table's selected thread in the detail view.
func (m *Model) showSelected() {
	if r, ok := m.table.Selected(); ok && r.TID != 0 {
		m.shown = detailTarget{pid: r.PID, tid: r.TID}
	}
	m.syncDetail()
}

func (m *Model) syncDetail() {
	if m.view != viewDetail || m.shown.tid == 0 {
		return
	}
	r := m.shown
	t, active := m.hist.rates(r.tid)
	if !active && m.snap != nil {
		for _, x := range m.snap.Threads {
			if x.TID == r.tid {
				t, active = x, true
			}
		}
	}
	if t.Comm == "" && m.wake.wakee.TID == t.TID {
		// A wakee outside the table (another process under -p): what the
		// wake-up row knew of it.
		t.PID, t.Comm = m.wake.wakee.PID, m.wake.wakee.Comm
	}
	var sib []model.ThreadRates
	if m.snap != nil {
		for _, x := range m.snap.Threads {
			if x.PID == t.PID {
				sib = append(sib, x)
			}
		}
	}
	vol, invol := m.hist.series(r.tid)
	m.detail.SetThread(t, active, vol, invol, sib)
	m.syncJVMNotes(t.PID, false)
	var now time.Time
	if m.snap != nil {
		now = m.snap.Time
	}
	m.detail.SetExit(r.exit, now)
}

func stepInterval(d time.Duration, dir int) time.Duration {
	if dir > 0 {
		for _, s := range intervals {
			if s > d {
				return s
			}
		}
		return intervals[len(intervals)-1]
	}
	for i := len(intervals) - 1; i >= 0; i-- {
		if intervals[i] < d {
			return intervals[i]
		}
	}
	return intervals[0]
}

// View draws the screen; it never returns more lines than the height or a
// line wider than the width.
func (m Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "ctxtop"
	return v
}

// Render is the screen as a string, for View and for tests.
func (m Model) Render() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	parts := []string{m.header.View()}
	if r := m.replayView(); r != "" {
		parts = append(parts, r)
	}
	if p := m.panelView(); p != "" {
		parts = append(parts, p)
	}
	body := ""
	switch m.view {
	case viewDetail:
		body = m.detail.View()
	case viewPerCPU:
		body = m.percpu.View()
	case viewHelp:
		body = m.help.View()
	case viewWakeups:
		body = m.wake.view.View()
	case viewColumns:
		p := m.columnsPanel()
		body = p.View()
	default:
		body = m.table.View()
	}
	bodyH := max(m.height-m.header.Height()-1-m.panelHeight()-m.replayHeight(), 0)
	if bodyH > 0 {
		// Pad the body so the footer stays on the last line.
		lines := strings.Split(body, "\n")
		for len(lines) < bodyH {
			lines = append(lines, "")
		}
		parts = append(parts, strings.Join(lines[:bodyH], "\n"))
	}
	parts = append(parts, m.footer())
	return textutil.Fit(strings.Join(parts, "\n"), m.width, m.height)
}

func (m Model) footer() string {
	th := m.th
	if m.filtering {
		return filter.Prompt(th, m.table.Filter(), m.width)
	}
	if m.prompt.kind != promptNone {
		return m.promptLine()
	}
	if s := m.statusView(); s != "" {
		return s
	}
	if m.lastErr != nil {
		return th.Error.Render(textutil.Truncate("sampling failed: "+m.lastErr.Error(), m.width))
	}
	self := m.selfText()
	var hints []string
	for _, b := range m.keys.ShortHelp() {
		if m.load == nil && b.Help().Key == "L" {
			continue
		}
		k := b.Help().Key
		if i := strings.IndexAny(k[1:], "/ "); i >= 0 {
			k = k[:i+1] // q, not q/F10: the help lists the rest
		}
		hints = append(hints, th.Key.Render(k)+" "+th.Dim.Render(m.hintWord(b)))
	}
	room := m.width - textutil.Width(self) - 1
	left := ""
	for _, h := range hints {
		next := h
		if left != "" {
			next = left + " " + h
		}
		if textutil.Width(next) > room {
			break
		}
		left = next
	}
	pad := max(m.width-textutil.Width(left)-textutil.Width(self), 0)
	return textutil.Truncate(left+strings.Repeat(" ", pad)+self, m.width)
}

// hintWord is a footer hint's one word; a toggle names what it switches
// to, not what is on screen.
func (m Model) hintWord(b key.Binding) string {
	switch {
	case b.Help().Key == m.keys.ToggleProcesses.Help().Key:
		switch m.table.Mode() {
		case table.ModeProcesses:
			return "cgroups"
		case table.ModeCgroups:
			return "threads"
		}
		return "processes"
	case b.Help().Key == m.keys.Group.Help().Key:
		if m.table.Grouped() {
			return "ungroup"
		}
		return "group"
	case b.Help().Key == m.keys.Pause.Help().Key:
		if m.paused {
			return "resume"
		}
		return "pause"
	case b.Help().Key == m.keys.Quit.Help().Key:
		return "quit"
	}
	return shortDesc(b.Help().Desc)
}

func shortDesc(d string) string {
	if i := strings.IndexAny(d, " /"); i > 0 {
		return d[:i]
	}
	return d
}

// selfText is ctxtop's own cost. A load normally runs in a workload process
// of its own, so the figure is the monitor's noise alone; a loader whose
// threads live in this process has them taken out, and says so.
func (m Model) selfText() string {
	if m.snap == nil {
		return ""
	}
	cpu, cs := m.snap.Self.CPUPercent, m.snap.Self.SwitchesPerSec
	label := "self"
	if m.load.running() {
		if lc, ls := m.load.ownRates(m.snap); lc > 0 || ls > 0 {
			cpu, cs = max(cpu-lc, 0), max(cs-ls, 0)
			label = "self excl. load"
		}
	}
	text := fmt.Sprintf("%s %s%% %s cs/s", label, format.Percent(cpu), format.Thousands(cs))
	if m.snap.Source != "" {
		// Which path read the tasks: its cost is the figure beside it.
		text += " · " + m.snap.Source
	}
	return m.th.Dim.Render(text)
}
