// Package help is the full key list, opened with ? or h.
package help

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ctxtop/ctxtop/internal/tui/keys"
	"github.com/ctxtop/ctxtop/internal/tui/textutil"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
)

// Model is the help component.
type Model struct {
	th            theme.Theme
	keys          keys.Map
	width, height int
	// extra is a mode's own keys (a replay's time keys), listed first.
	extraTitle string
	extra      []key.Binding
}

// New returns the help screen for km.
func New(th theme.Theme, km keys.Map) Model { return Model{th: th, keys: km} }

// SetExtra lists a mode's own keys under title, above the others.
func (m *Model) SetExtra(title string, bindings []key.Binding) {
	m.extraTitle, m.extra = title, bindings
}

// extraLines are the extra keys as "key desc" pairs filling each line.
func (m Model) extraLines() []string {
	if len(m.extra) == 0 {
		return nil
	}
	lines := []string{m.th.Title.Render(m.extraTitle)}
	line := ""
	for _, b := range m.extra {
		h := b.Help()
		cell := m.th.Key.Render(h.Key) + " " + h.Desc
		if line != "" && textutil.Width(line)+2+textutil.Width(cell) > m.width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += "  "
		}
		line += cell
	}
	return append(lines, line)
}

// Update has nothing of its own to handle.
func (m Model) Update(tea.Msg) (Model, tea.Cmd) { return m, nil }

// SetSize sets the space the view may use.
func (m *Model) SetSize(w, h int) { m.width, m.height = w, h }

// SetTheme swaps the styles.
func (m *Model) SetTheme(th theme.Theme) { m.th = th }

// legend explains the columns and marks in as few lines as fit 80 columns.
var legend = []string{
	"CSW/s voluntary switches/s: blocked on I/O, a lock, a sleep, a hand-off",
	"NVCSW/s involuntary: time slice used up, preempted   TOTAL/s both",
	"%CPU on a CPU (100 = one)   WAIT% runnable, waiting for a CPU",
	"CPUS allowed (* pinned)   THR threads   ×N grouped rows   PIDS processes",
	"WHY ≥ --hot: blocking (futex, pipe, ...) or preempted  THRT% cgroup throttled",
	"(no thread row) header cs/s less all rows: new/exited tasks, idle",
	"Sparklines: log scale, smallest to largest value shown. Hot rows are",
	"highlighted, stronger at 10× and 100× --hot.",
}

// Legend is the help screen's explanation of the columns and marks, one
// line each, for the manual page too.
func Legend() []string { return slices.Clone(legend) }

// View lays the bindings out in as many columns as fit, then the legend.
func (m Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	var all []key.Binding
	for _, g := range m.keys.FullHelp() {
		all = append(all, g...)
	}
	const keyW, descW = 5, 19
	cellW := keyW + 1 + descW + 1
	cols := max((m.width+1)/cellW, 1)
	rows := (len(all) + cols - 1) / cols
	lines := m.extraLines()
	lines = append(lines, m.th.Title.Render("keys")+m.th.Dim.Render("  (any key returns)"))
	for r := range rows {
		var b strings.Builder
		for c := range cols {
			i := c*rows + r
			if i >= len(all) {
				break
			}
			h := all[i].Help()
			cell := m.th.Key.Render(textutil.PadRight(h.Key, keyW)) + " " + textutil.PadRight(h.Desc, descW)
			if c < cols-1 {
				cell += " "
			}
			b.WriteString(cell)
		}
		lines = append(lines, strings.TrimRight(b.String(), " "))
	}
	lines = append(lines, m.th.Title.Render("columns"))
	for _, l := range legend {
		lines = append(lines, m.th.Dim.Render(l))
	}
	return textutil.Fit(strings.Join(lines, "\n"), m.width, m.height)
}
