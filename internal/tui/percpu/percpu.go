// Package percpu draws interrupts and rescheduling IPIs per CPU as bars,
// to show which CPUs are being woken.
package percpu

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/sanitize"
	"github.com/ctxtop/ctxtop/internal/tui/textutil"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
)

// Model is the per-CPU component.
type Model struct {
	th            theme.Theme
	width, height int
	cpus          []model.CPURates
	// noRates is why the interval has no per-CPU rates, "" when it has.
	noRates string
	// sched is the wake-up tracer's per-CPU figures; nil when it is off.
	sched *model.Wakeups
}

// New returns an empty per-CPU view.
func New(th theme.Theme) Model { return Model{th: th} }

// Update has nothing of its own to handle.
func (m Model) Update(tea.Msg) (Model, tea.Cmd) { return m, nil }

// SetSize sets the space the view may use.
func (m *Model) SetSize(w, h int) { m.width, m.height = w, h }

// SetTheme swaps the styles.
func (m *Model) SetTheme(th theme.Theme) { m.th = th }

// SetSnapshot shows the per-CPU rates of s.
func (m *Model) SetSnapshot(s *model.Snapshot) {
	m.cpus, m.noRates = s.System.PerCPU, s.System.NoRates
}

// SetSched adds context switches/s and migrations/s per CPU from the
// wake-up tracer; nil leaves them out.
func (m *Model) SetSched(w *model.Wakeups) { m.sched = w }

// View renders one line per CPU: interrupts/s and IPIs/s, each a bar
// scaled to the busiest CPU, so the uneven ones stand out.
func (m Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	th := m.th
	if m.noRates != "" {
		return th.Dim.Render(textutil.Truncate("no per-CPU rates this interval: "+sanitize.Name(m.noRates), m.width))
	}
	if len(m.cpus) == 0 {
		return th.Dim.Render(textutil.Truncate("no per-CPU interrupt figures yet", m.width))
	}
	var hiIn, hiIPI float64
	for _, c := range m.cpus {
		hiIn = max(hiIn, c.InterruptsPerSec)
		hiIPI = max(hiIPI, c.ReschedIPIsPerSec)
	}
	sched, note := m.schedColumns()
	// label(6) + two columns of value(10) + bar, separated by spaces, then
	// the tracer's cs/s and migr/s when it is on.
	schedHead := sched(-1)
	bar := max((m.width-6-2*11-3-textutil.Width(schedHead))/2, 0)
	head := textutil.PadRight("CPU", 6) + textutil.PadLeft("in/s", 10) + " " + strings.Repeat(" ", bar) + "  " + textutil.PadLeft("IPI/s", 10) + " " + strings.Repeat(" ", bar) + schedHead
	lines := []string{th.ColumnHeader.Render(textutil.PadRight(head, m.width))}
	rows := m.height - 1
	if note != "" {
		rows--
	}
	for i, c := range m.cpus {
		if i == rows-1 && len(m.cpus) > rows {
			lines = append(lines, th.Dim.Render(fmt.Sprintf("… %d more CPUs", len(m.cpus)-i)))
			break
		}
		line := textutil.PadRight(fmt.Sprintf("cpu%d", i), 6) +
			textutil.PadLeft(format.Rate(c.InterruptsPerSec, 10), 10) + " " + th.Spark.Render(textutil.Bar(c.InterruptsPerSec, hiIn, bar)) + "  " +
			textutil.PadLeft(format.Rate(c.ReschedIPIsPerSec, 10), 10) + " " + th.Hot[1].Render(textutil.Bar(c.ReschedIPIsPerSec, hiIPI, bar))
		// Bar is always bar cells wide, so the columns after it line up.
		line += sched(i)
		lines = append(lines, line)
	}
	if note != "" {
		lines = append(lines, th.Dim.Render(textutil.Truncate(note, m.width)))
	}
	return textutil.Fit(strings.Join(lines, "\n"), m.width, m.height)
}

// schedColumns returns a function drawing the cs/s and migr/s cells of a
// CPU (-1: the header), empty when the tracer has no figures, and a note
// to show instead.
func (m Model) schedColumns() (func(cpu int) string, string) {
	w := m.sched
	switch {
	case w == nil:
		return func(int) string { return "" }, ""
	case w.Unavailable != "":
		return func(int) string { return "" }, "cs/s and migrations/s per CPU: " + w.Unavailable
	case len(w.PerCPU) == 0:
		return func(int) string { return "" }, "cs/s and migrations/s per CPU: first figures after one refresh"
	}
	// Too narrow for both: migrations go first.
	both := m.width >= 6+2*11+3+18
	return func(cpu int) string {
		cs, migr := "cs/s", "migr/s"
		switch {
		case cpu >= len(w.PerCPU):
			cs, migr = "-", "-"
		case cpu >= 0:
			c := w.PerCPU[cpu]
			cs, migr = format.Rate(c.SwitchesPerSec, 9), format.Rate(c.MigrationsPerSec, 7)
		}
		if !both {
			return " " + textutil.PadLeft(cs, 9)
		}
		return " " + textutil.PadLeft(cs, 9) + " " + textutil.PadLeft(migr, 7)
	}, ""
}
