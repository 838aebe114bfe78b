// Package header draws the TUI's top lines: host facts, the refresh state,
// and the system-wide rates with their recent history.
package header

import (
	"fmt"
	"math"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/sanitize"
	"github.com/ctxtop/ctxtop/internal/tui/textutil"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
)

// historyLen bounds the sparkline history: wider than any terminal line.
const historyLen = 512

// Model is the header component.
type Model struct {
	th                    theme.Theme
	width, height         int
	host, kernel, version string
	facts                 hostinfo.Facts
	snap                  *model.Snapshot
	cs, in                []float64
	interval              time.Duration
	paused                bool
	note                  string
}

// New returns a header for the given host facts, read once at start.
func New(th theme.Theme, host, kernel, version string) Model {
	return Model{th: th, host: host, kernel: kernel, version: version}
}

// SetFacts adds what gopsutil knows of the host (CPU model, memory, boot
// time) to the first line, as far as the width allows.
func (m *Model) SetFacts(f hostinfo.Facts) {
	m.facts = f
	if f.Hostname != "" {
		m.host = f.Hostname
	}
	if f.Kernel != "" {
		m.kernel = f.Kernel
	}
}

// Update has nothing to react to: the root feeds snapshots through SetSnapshot.
func (m Model) Update(tea.Msg) (Model, tea.Cmd) { return m, nil }

// SetSize sets the space the header may use; Height says how much it takes.
func (m *Model) SetSize(w, h int) { m.width, m.height = w, h }

// SetTheme swaps the styles, when the background colour becomes known.
func (m *Model) SetTheme(th theme.Theme) { m.th = th }

// SetSnapshot shows s and appends its rates to the sparkline history. An
// interval without host rates goes in as NaN, a gap in the sparklines: its
// zeros are unknown, not a quiet host.
func (m *Model) SetSnapshot(s *model.Snapshot) {
	m.snap = s
	cs, in := s.System.ContextSwitchesPerSec, s.System.InterruptsPerSec
	if s.System.NoRates != "" {
		cs, in = math.NaN(), math.NaN()
	}
	m.cs = appendBounded(m.cs, cs)
	m.in = appendBounded(m.in, in)
}

// noRates is why the shown interval has no host rates, "" when it has.
func (m Model) noRates() string {
	if m.snap == nil {
		return ""
	}
	return m.snap.System.NoRates
}

// rate is v with thousands separators, "-" when the interval has none.
func (m Model) rate(v float64) string {
	if m.noRates() != "" {
		return "-"
	}
	return format.Thousands(v)
}

// SetHistory replaces the sparkline history, oldest first: a replay that
// jumps shows what playing up to the new position would have drawn.
func (m *Model) SetHistory(cs, in []float64) {
	m.cs = append(m.cs[:0], cs[max(len(cs)-historyLen, 0):]...)
	m.in = append(m.in[:0], in[max(len(in)-historyLen, 0):]...)
}

// History is the cs/s sparkline's values, oldest first.
func (m Model) History() []float64 { return m.cs }

// SetState shows the refresh interval, whether sampling is paused, and a
// short note (filter, view mode) at the end of the first line.
func (m *Model) SetState(interval time.Duration, paused bool, note string) {
	m.interval, m.paused, m.note = interval, paused, note
}

func appendBounded(h []float64, v float64) []float64 {
	if len(h) == historyLen {
		copy(h, h[1:])
		h = h[:historyLen-1]
	}
	return append(h, v)
}

// Height is the number of lines View returns at the current size.
func (m Model) Height() int {
	switch {
	case m.height >= 20:
		return 4
	case m.height >= 8:
		return 2
	default:
		return 1
	}
}

// View renders the header.
func (m Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	lines := []string{m.titleLine()}
	if m.Height() >= 2 {
		if m.Height() >= 4 {
			lines = append(lines, m.rateLine("cs/s", m.cs, true), m.rateLine("in/s", m.in, false), m.statsLine())
		} else {
			lines = append(lines, m.compactLine())
		}
	}
	return textutil.Fit(strings.Join(lines, "\n"), m.width, m.Height())
}

func (m Model) titleLine() string {
	t := m.th
	// The host's facts go in while they fit; the least telling goes first:
	// the CPU model, then memory, uptime and the kernel.
	now := time.Now()
	if m.snap != nil {
		now = m.snap.Time
	}
	cpus := ""
	if m.snap != nil {
		cpus = fmt.Sprintf("%d CPUs", m.snap.System.CPUs)
	}
	withModel := cpus
	if m.facts.CPUModel != "" && m.snap != nil {
		withModel = fmt.Sprintf("%d × %s", m.snap.System.CPUs, m.facts.CPUModel)
	}
	up := ""
	if u := m.facts.Uptime(now); u > 0 {
		up = "up " + hostinfo.FormatUptime(u)
	}
	kernel := ""
	if m.kernel != "" {
		kernel = t.Dim.Render(m.kernel)
	}
	var parts []string
	for _, drop := range []int{0, 1, 2, 3, 4} {
		model, mem, upt, kern := withModel, m.facts.MemText(), up, kernel
		if drop >= 1 {
			model = cpus
		}
		if drop >= 2 {
			mem = ""
		}
		if drop >= 3 {
			upt = ""
		}
		if drop >= 4 {
			kern = ""
		}
		parts = []string{t.Title.Render("ctxtop"), m.host}
		for _, p := range []string{kern, model, mem, upt} {
			if p != "" {
				parts = append(parts, p)
			}
		}
		parts = append(parts, m.stateParts()...)
		if textutil.Width(strings.Join(parts, "  ")) <= m.width {
			break
		}
	}
	line := strings.Join(parts, "  ")
	if textutil.Width(line) > m.width {
		// Narrow: the clock and state matter more than the kernel and host.
		short := []string{t.Title.Render("ctxtop")}
		if m.snap != nil {
			short = append(short, m.snap.Time.Format("15:04:05"))
		}
		if m.interval > 0 {
			short = append(short, m.interval.String())
		}
		if m.paused {
			short = append(short, t.Spike.Render("PAUSED"))
		}
		if m.note != "" {
			short = append(short, m.note)
		}
		short = append(short, m.host)
		line = strings.Join(short, " ")
	}
	return textutil.Truncate(line, m.width)
}

// stateParts are the refresh interval, the clock, PAUSED and the note.
func (m Model) stateParts() []string {
	var parts []string
	if m.interval > 0 {
		parts = append(parts, "every "+m.interval.String())
	}
	if m.snap != nil {
		parts = append(parts, m.snap.Time.Format("15:04:05"))
	}
	if m.paused {
		parts = append(parts, m.th.Spike.Render("PAUSED"))
	}
	if m.note != "" {
		parts = append(parts, m.note)
	}
	return parts
}

func (m Model) rateLine(label string, hist []float64, spikeLine bool) string {
	t := m.th
	val := "-"
	if m.snap != nil {
		v := m.snap.System.InterruptsPerSec
		if spikeLine {
			v = m.snap.System.ContextSwitchesPerSec
		}
		val = m.rate(v)
	}
	lab := t.Title.Render(textutil.PadRight(label, 5))
	spike := ""
	if spikeLine && m.snap != nil && m.snap.Spike.Active {
		lab = t.Spike.Render(textutil.PadRight(label, 5))
		spike = " " + t.Spike.Render(" SPIKE ") + " " + format.SpikeReason(m.snap.Spike)
	}
	if why := m.noRates(); spikeLine && why != "" {
		spike = " " + t.Dim.Render("no rates: "+sanitize.Name(why))
	}
	head := lab + " " + t.Value.Render(textutil.PadLeft(val, 11)) + spike + " "
	// The sparkline keeps 8 cells, but not from the reason there is no
	// rate: its newest cells are the gap the reason explains.
	room := m.width - 8
	if m.noRates() != "" {
		room = m.width
	}
	if textutil.Width(head) > room {
		head = textutil.Truncate(head, max(room, 0))
	}
	return head + t.Spark.Render(textutil.Sparkline(hist, m.width-textutil.Width(head)))
}

func (m Model) statsLine() string {
	if m.snap == nil {
		return m.th.Dim.Render("collecting the first sample…")
	}
	s := m.snap.System
	t := m.th
	kv := func(k, v string) string { return t.Dim.Render(k) + " " + v }
	parts := []string{
		kv("IPI/s", m.rate(s.ReschedIPIsPerSec)),
		kv("run", fmt.Sprint(s.ProcsRunning)) + " " + kv("blk", fmt.Sprint(s.ProcsBlocked)),
		kv("load", fmt.Sprintf("%.2f %.2f %.2f", s.LoadAvg[0], s.LoadAvg[1], s.LoadAvg[2])),
	}
	if s.HasPSI {
		parts = append(parts, kv("psi cpu", format.Percent(s.PSICPUSomeAvg10)+"%"))
	}
	parts = append(parts, kv("tasks", format.Thousands(float64(m.snap.Tasks))))
	return textutil.JoinFitting(parts, "  ", m.width)
}

// compactLine is the small-terminal header: both rates and the spike mark.
func (m Model) compactLine() string {
	if m.snap == nil {
		return m.th.Dim.Render("collecting…")
	}
	t := m.th
	cs := t.Title.Render("cs/s") + " " + t.Value.Render(m.rate(m.snap.System.ContextSwitchesPerSec))
	if m.snap.Spike.Active {
		cs = t.Spike.Render("cs/s") + " " + t.Value.Render(m.rate(m.snap.System.ContextSwitchesPerSec)) + " " + t.Spike.Render("SPIKE")
	}
	in := t.Title.Render("in/s") + " " + m.rate(m.snap.System.InterruptsPerSec)
	line := cs + "  " + in
	if why := m.noRates(); why != "" {
		// The reason before the sparkline: a narrow terminal keeps it.
		return textutil.Truncate(line+"  "+t.Dim.Render("no rates: "+sanitize.Name(why)), m.width)
	}
	if room := m.width - textutil.Width(line) - 1; room >= 4 {
		line += " " + t.Spark.Render(textutil.Sparkline(m.cs, room))
	}
	return line
}
