package tui

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ctxtop/ctxtop/internal/procctl"
	"github.com/ctxtop/ctxtop/internal/tui/filter"
	"github.com/ctxtop/ctxtop/internal/tui/table"
	"github.com/ctxtop/ctxtop/internal/tui/textutil"
)

// Actions act on the selected thread or process (htop's F9, F7/F8 and
// affinity). Each returns the line the status shows, or an error that
// says why it could not.
type Actions interface {
	Signal(procctl.Target, procctl.Signal) (string, error)
	SetAffinity(procctl.Target, []int) (string, error)
	Renice(procctl.Target, int) (string, error)
}

// Kernel is the Actions of the running kernel (package procctl).
type Kernel struct{}

func (Kernel) Signal(t procctl.Target, s procctl.Signal) (string, error) { return procctl.Send(t, s) }
func (Kernel) SetAffinity(t procctl.Target, c []int) (string, error) {
	return procctl.SetAffinity(t, c)
}
func (Kernel) Renice(t procctl.Target, d int) (string, error) { return procctl.Renice(t, d) }

// noActionsInReplay is why a replay acts on nothing: its tasks are the
// recording's, and their IDs may name other tasks here.
const noActionsInReplay = "not possible in a replay: its threads are the recording's, not this host's"

type promptKind int

const (
	promptNone promptKind = iota
	promptSignal
	promptAffinity
)

// prompt is an action waiting on the user: the signal picker (confirm
// with Enter) or the CPU list being typed.
type prompt struct {
	kind   promptKind
	target procctl.Target
	sig    int // index in procctl.Signals
	input  string
	// cpus is the target's allowed CPUs when the prompt opened.
	cpus string
}

// statusLine is what the last action did, shown in the footer until the
// next key, or for statusFor.
type statusLine struct {
	text string
	err  bool
	at   time.Time
}

const statusFor = 10 * time.Second

func (m *Model) setStatus(text string, err error) {
	if err != nil {
		m.status = statusLine{text: err.Error(), err: true, at: time.Now()}
		return
	}
	m.status = statusLine{text: text, at: time.Now()}
}

// target is the selected row as something to act on, or why it is not.
func (m *Model) target() (procctl.Target, error) {
	if w := m.wake.wakee; m.view == viewDetail && w.TID != 0 {
		// The detail opened from the wake-up view shows the wakee.
		return procctl.Target{PID: w.PID, TID: w.TID, Comm: w.Comm}, nil
	}
	r, ok := m.table.Selected()
	switch {
	case !ok:
		return procctl.Target{}, errors.New("no row selected")
	case m.table.Cgroups():
		return procctl.Target{}, errors.New("select a thread or a process: a cgroup row is many processes")
	case r.Grouped:
		return procctl.Target{}, fmt.Errorf("select a single thread or process: this row groups %d", r.Count)
	case r.PID <= 0:
		return procctl.Target{}, errors.New("this row is no task")
	case m.table.Processes() || r.TID == 0:
		return procctl.Target{PID: r.PID, Comm: r.Comm}, nil
	}
	return procctl.Target{PID: r.PID, TID: r.TID, Comm: r.Comm}, nil
}

// handleHtopKey handles the keys htop users bring: the tree, folding,
// signals, affinity and nice. ok is false for any other key.
func (m *Model) handleHtopKey(k tea.KeyPressMsg) bool {
	km := &m.keys
	if m.view != viewTable && m.view != viewDetail {
		return false
	}
	switch {
	case key.Matches(k, km.Tree):
		m.table.SetTree(!m.table.TreeShown())
		m.view = viewTable
		m.syncHeader()
		return true
	case key.Matches(k, km.Fold, km.Unfold):
		if m.view != viewTable || !m.table.Foldable() {
			return false
		}
		m.table.Fold(key.Matches(k, km.Unfold))
		return true
	case key.Matches(k, km.Signal, km.Affinity, km.NiceDown, km.NiceUp):
	default:
		return false
	}
	if m.replay != nil || m.opts.Actions == nil {
		why := m.opts.NoActionsWhy
		if m.replay != nil {
			why = noActionsInReplay
		}
		if why == "" {
			why = "not possible here"
		}
		m.setStatus("", errors.New(why))
		return true
	}
	t, err := m.target()
	if err != nil {
		m.setStatus("", err)
		return true
	}
	switch {
	case key.Matches(k, km.Signal):
		m.prompt = prompt{kind: promptSignal, target: t}
	case key.Matches(k, km.Affinity):
		r, _ := m.table.Selected()
		m.prompt = prompt{kind: promptAffinity, target: t, cpus: r.CPUs}
	case key.Matches(k, km.NiceDown):
		m.setStatus(m.opts.Actions.Renice(t, -1))
	case key.Matches(k, km.NiceUp):
		m.setStatus(m.opts.Actions.Renice(t, +1))
	}
	return true
}

// handlePromptKey answers the open prompt: the picker moves with the
// arrows and sends on Enter; the CPU list is typed and applied on Enter.
// Esc, in either, does nothing and says so.
func (m *Model) handlePromptKey(k tea.KeyPressMsg) {
	p := &m.prompt
	if p.kind == promptSignal {
		switch k.String() {
		case "left", "up", "shift+tab":
			p.sig = (p.sig + len(procctl.Signals) - 1) % len(procctl.Signals)
		case "right", "down", "tab":
			p.sig = (p.sig + 1) % len(procctl.Signals)
		case "enter":
			m.setStatus(m.opts.Actions.Signal(p.target, procctl.Signals[p.sig]))
			m.prompt = prompt{}
		case "esc", "q", "n":
			m.setStatus("no signal sent", nil)
			m.prompt = prompt{}
		}
		return
	}
	in, typing := filter.Edit(p.input, k)
	if k.String() == "esc" {
		m.setStatus("affinity unchanged", nil)
		m.prompt = prompt{}
		return
	}
	p.input = in
	if typing {
		return
	}
	cpus, err := procctl.ParseCPUs(in)
	if err == nil {
		m.setStatus(m.opts.Actions.SetAffinity(p.target, cpus))
	} else {
		m.setStatus("", fmt.Errorf("affinity unchanged: %w", err))
	}
	m.prompt = prompt{}
}

// promptLine is the footer while a prompt is open: what will be done to
// whom first, so that a narrow screen cuts the choices, not the target.
func (m *Model) promptLine() string {
	th, p := m.th, m.prompt
	if p.kind == promptSignal {
		var sigs []string
		for i, s := range procctl.Signals {
			if i == p.sig {
				s.Name = th.Key.Render("[" + s.Name + "]")
			}
			sigs = append(sigs, s.Name)
		}
		line := th.Error.Render(fmt.Sprintf("send SIG%s to %s?", procctl.Signals[p.sig].Name, p.target)) +
			th.Dim.Render("  Enter yes  Esc no  ←/→ signal  ") + strings.Join(sigs, " ")
		return textutil.Truncate(line, m.width)
	}
	now := ""
	if p.cpus != "" {
		now = " (now " + p.cpus + ")"
	}
	line := th.Key.Render(fmt.Sprintf("CPUs for %s%s: ", p.target, now)) + p.input + "█" +
		th.Dim.Render("  like taskset -c: 0  0-1  0,2   Enter apply  Esc cancel")
	return textutil.Truncate(line, m.width)
}

// statusView is the last action's line for the footer, "" when there is
// none to show.
func (m *Model) statusView() string {
	if m.status.text == "" {
		return ""
	}
	if m.status.err {
		return m.th.Error.Render(textutil.Truncate(m.status.text, m.width))
	}
	return textutil.Truncate(m.status.text, m.width)
}

// expireStatus drops a status shown for long enough; a sample calls it,
// so an idle screen is not redrawn for it alone.
func (m *Model) expireStatus() {
	if m.status.text != "" && time.Since(m.status.at) > statusFor {
		m.status = statusLine{}
	}
}

// handleMouse selects the row clicked, sorts by the title clicked, and
// scrolls with the wheel, in the table.
func (m *Model) handleMouse(msg tea.MouseMsg) {
	if m.view != viewTable || m.filtering || m.prompt.kind != promptNone {
		return
	}
	ms := msg.Mouse()
	y := ms.Y - (m.header.Height() + m.replayHeight() + m.panelHeight())
	switch msg.(type) {
	case tea.MouseWheelMsg:
		switch ms.Button {
		case tea.MouseWheelUp:
			m.table.Scroll(-3)
		case tea.MouseWheelDown:
			m.table.Scroll(+3)
		}
	case tea.MouseClickMsg:
		if ms.Button != tea.MouseLeft {
			return
		}
		if y == 0 {
			m.table.ClickHeader(ms.X)
		} else {
			m.table.ClickRow(y)
		}
	}
	m.syncHeader()
}

// rowKind names what the table's rows are, for the settings file.
func rowKind(t *table.Model) string {
	switch t.Mode() {
	case table.ModeProcesses:
		return "processes"
	case table.ModeCgroups:
		return "cgroups"
	}
	return "threads"
}
