// Package detail is the per-thread view: the thread's recent history and
// placement, and the other hot threads of its process.
package detail

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/sanitize"
	"github.com/ctxtop/ctxtop/internal/tui/textutil"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
)

// Model is the detail component.
type Model struct {
	th            theme.Theme
	width, height int
	thread        model.ThreadRates
	active        bool
	vol, invol    []float64
	siblings      []model.ThreadRates
	wakeups       *model.Wakeups
	// wokenBy and wakes are the thread's top wakers and wakees in
	// wakeups, picked when either changes rather than at every frame.
	wokenBy, wakes []model.WakeupPair
	// stacks is the stack tracer's state, nil while it is off.
	stacks *model.Stacks
	// notes are lines about the process's stacks from outside the tracer
	// (a JVM's missing perf map or frame pointers).
	notes []string
	// exit is when the thread shown exited, zero while it lives; now is
	// the time of the latest snapshot, which "ago" counts to.
	exit Exit
	now  time.Time
}

// Exit is when the thread shown exited: within the interval from After to
// By, the one in which it was first missing.
type Exit struct {
	After, By time.Time
	// Process is true when its whole process exited.
	Process bool
}

// Gone says whether the thread has exited.
func (e Exit) Gone() bool { return !e.By.IsZero() }

// New returns an empty detail view.
func New(th theme.Theme) Model { return Model{th: th} }

// Update has nothing of its own to handle; Esc is the root's.
func (m Model) Update(tea.Msg) (Model, tea.Cmd) { return m, nil }

// SetSize sets the space the view may use.
func (m *Model) SetSize(w, h int) { m.width, m.height = w, h }

// SetTheme swaps the styles.
func (m *Model) SetTheme(th theme.Theme) { m.th = th }

// SetThread shows t. active is false when t did not run in the last
// interval (its figures are then the last ones seen). vol and invol are its
// recent voluntary and involuntary rates, oldest first; siblings are the
// other threads of its process that switched in the last interval.
func (m *Model) SetThread(t model.ThreadRates, active bool, vol, invol []float64, siblings []model.ThreadRates) {
	m.thread, m.active, m.vol, m.invol, m.siblings = t, active, vol, invol, siblings
	m.pickWakeups()
}

// SetExit marks the thread shown as exited (a zero Exit: alive); now is
// the latest snapshot's time, live or recorded.
func (m *Model) SetExit(e Exit, now time.Time) { m.exit, m.now = e, now }

// SetWakeups gives the wake-up graph the "woken by" and "wakes" lists are
// drawn from; nil when the tracer is off.
func (m *Model) SetWakeups(w *model.Wakeups) {
	m.wakeups = w
	m.pickWakeups()
}

func (m *Model) pickWakeups() {
	m.wokenBy, m.wakes = nil, nil
	if w := m.wakeups; w != nil && w.Unavailable == "" {
		m.wokenBy, m.wakes = w.WakersOf(m.thread.TID, topWakers), w.WakeesOf(m.thread.TID, topWakers)
	}
}

// TID is the thread shown.
func (m Model) TID() int { return m.thread.TID }

// View renders the detail view.
func (m Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	t, th := m.thread, m.th
	gone := m.exit.Gone()
	if gone {
		// Its last figures are history now: nothing runs, switches or
		// waits any more, and what it waited on is no longer so.
		t.VoluntaryPerSec, t.InvoluntaryPerSec, t.CPUPercent, t.WaitPercent = 0, 0, 0, 0
		t.Hot, t.WaitOn, t.Wchan, t.Syscall = false, nil, "", ""
	}
	var lines []string
	title := fmt.Sprintf("thread %d %s", t.TID, th.Value.Render(t.Comm))
	if t.ProcessComm != "" || t.PID != t.TID {
		title += fmt.Sprintf("  of process %d %s", t.PID, t.ProcessComm)
	}
	if gone {
		title += "  " + th.Error.Render("EXITED")
	}
	lines = append(lines, th.Title.Render("▍")+title)
	switch {
	case gone:
		lines = append(lines, th.Error.Render(textutil.Truncate(m.exitText(), m.width)))
	case !m.active:
		lines = append(lines, th.Dim.Render("did not run in the last interval; figures are the last seen"))
	}
	cpus := t.CPUsAllowed
	if t.Pinned {
		cpus = th.Pinned.Render(cpus + " (pinned)")
	}
	state := "?"
	if t.State != 0 {
		state = string(rune(t.State))
	}
	if gone {
		state = "exited"
	}
	lines = append(lines, textutil.JoinFitting([]string{
		th.Dim.Render("state") + " " + state,
		th.Dim.Render("last CPU") + " " + strconv.Itoa(t.LastCPU),
		th.Dim.Render("allowed") + " " + cpus,
		th.Dim.Render("%CPU") + " " + format.Percent(t.CPUPercent),
		th.Dim.Render("wait") + " " + format.Percent(t.WaitPercent) + "%",
	}, "  ", m.width))
	if t.Hot {
		lines = append(lines, th.Hot[2].Render("hot")+": "+t.Why.String())
	}
	lines = append(lines, waitLines(t, th, m.width)...)
	spark := func(label string, now float64, hist []float64) string {
		head := th.Title.Render(textutil.PadRight(label, 13)) + " " + th.Value.Render(textutil.PadLeft(format.Rate(now, 10), 10)) + " "
		room := m.width - textutil.Width(head)
		if room < 4 {
			return textutil.Truncate(head, m.width)
		}
		return head + th.Spark.Render(textutil.Sparkline(hist, room))
	}
	lines = append(lines,
		spark("voluntary/s", t.VoluntaryPerSec, m.vol),
		spark("involuntary/s", t.InvoluntaryPerSec, m.invol))

	// Where the thread blocks and who wakes it from where is what the
	// view is opened for: on a short terminal the wakers' and wakees'
	// lists give up rows, down to one each, before the stacks do.
	stacks := m.stackLines()
	room := m.height - 1 - len(lines) - len(stacks)
	limit := topWakers
	for limit > 1 && m.wakeRows(limit) > room {
		limit--
	}
	lines = append(lines, m.wakeLines(limit)...)
	lines = append(lines, stacks...)

	var hot []model.ThreadRates
	for _, s := range m.siblings {
		if s.TID != t.TID && s.PID == t.PID && s.Hot {
			hot = append(hot, s)
		}
	}
	lines = append(lines, "")
	if len(hot) == 0 {
		lines = append(lines, th.Dim.Render("no other hot thread in this process"))
	} else {
		lines = append(lines, th.Title.Render(fmt.Sprintf("other hot threads of process %d", t.PID)))
		for _, s := range hot {
			row := fmt.Sprintf("%7d %-15s %9s  %s", s.TID, s.Comm, format.Rate(s.TotalPerSec(), 9), s.Why)
			lines = append(lines, th.Hot[0].Render(textutil.Truncate(row, m.width)))
		}
	}
	// Keep the last line for the way back, even when the list is cut.
	body := textutil.Fit(strings.Join(lines, "\n"), m.width, m.height-1)
	return body + "\n" + th.Dim.Render(textutil.Truncate("Esc back  ↑/↓ other threads", m.width))
}

// exitText says which exited and when: between the last sample that saw
// it and the first that did not, and how long before the latest sample.
func (m Model) exitText() string {
	e := m.exit
	who := "thread"
	if e.Process {
		who = fmt.Sprintf("process %d", m.thread.PID)
	}
	layout := "15:04:05"
	if e.By.Sub(e.After) < 2*time.Second {
		layout = "15:04:05.0" // a refresh under a second apart
	}
	ago := max(m.now.Sub(e.By), 0).Round(time.Second)
	return fmt.Sprintf("%s exited between %s and %s (%s ago); rates 0 since", who,
		e.After.Format(layout), e.By.Format(layout), ago)
}

// waitLines are what the thread was seen waiting on, the raw kernel
// function and system call of the last look, and its cgroup: none when
// nothing is known.
func waitLines(t model.ThreadRates, th theme.Theme, width int) []string {
	var lines []string
	if len(t.WaitOn) > 0 {
		parts := make([]string, 0, len(t.WaitOn))
		for _, w := range t.WaitOn {
			parts = append(parts, w.Reason+" "+strconv.Itoa(int(w.Share*100+0.5))+"%")
		}
		lines = append(lines, textutil.Truncate(th.Dim.Render("waits on")+" "+strings.Join(parts, ", "), width))
	}
	var raw []string
	if t.Wchan != "" {
		raw = append(raw, th.Dim.Render("wchan")+" "+sanitize.Name(t.Wchan))
	}
	if t.Syscall != "" {
		raw = append(raw, th.Dim.Render("syscall")+" "+sanitize.Name(t.Syscall))
	}
	if len(raw) > 0 {
		lines = append(lines, textutil.JoinFitting(raw, "  ", width))
	}
	if c := t.Container; c != nil {
		lines = append(lines, textutil.Truncate(containerLine(c, th), width))
	}
	if t.Cgroup != "" {
		name := model.CgroupName(t.Cgroup)
		cg := th.Dim.Render("cgroup") + " " + name
		if p := sanitize.Name(t.Cgroup); p != name {
			cg += th.Dim.Render(" (" + p + ")")
		}
		lines = append(lines, textutil.Truncate(cg, width))
	}
	return lines
}

// containerLine names what runs in the thread's cgroup, as kubectl and the
// runtimes name it: "pod shop/checkout-7d9f (burstable)  container nginx
// containerd 3f1c2b4d5e6f".
func containerLine(c *model.Container, th theme.Theme) string {
	var parts []string
	if c.PodUID != "" {
		pod := c.PodLabel()
		if c.Namespace != "" {
			pod = c.Namespace + "/" + pod
		}
		if c.QoS != "" {
			pod += th.Dim.Render(" (" + c.QoS + ")")
		}
		parts = append(parts, th.Dim.Render("pod")+" "+pod)
	}
	if c.ID != "" {
		ctr := th.Dim.Render("container") + " "
		if c.Name != "" {
			ctr += c.Name + " "
		}
		rt := c.Runtime
		if rt == "" {
			rt = "id"
		}
		parts = append(parts, ctr+th.Dim.Render(rt+" "+c.Short()))
	}
	return strings.Join(parts, "  ")
}
