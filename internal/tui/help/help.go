// Package help is the full key list, opened with ? or h.
package help

import (
	"fmt"
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
	// offset is the first line shown when the help is taller than the
	// screen; the arrows move it.
	offset int
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

// Update pages through a help taller than the screen with the arrows,
// PgUp/PgDn, Home and End; the root sends it only those keys (Scrolls),
// any other returns from the help.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	page := max(m.height-2, 1)
	switch {
	case key.Matches(k, m.keys.Up):
		m.offset--
	case key.Matches(k, m.keys.Down):
		m.offset++
	case key.Matches(k, m.keys.PageUp):
		m.offset -= page
	case key.Matches(k, m.keys.PageDown):
		m.offset += page
	case key.Matches(k, m.keys.Home):
		m.offset = 0
	case key.Matches(k, m.keys.End):
		m.offset = len(m.lines())
	}
	m.offset = m.clampOffset(len(m.lines()))
	return m, nil
}

// Scrolls says whether k pages the help rather than leaving it.
func (m Model) Scrolls(k tea.KeyPressMsg) bool {
	return key.Matches(k, m.keys.Up, m.keys.Down, m.keys.PageUp, m.keys.PageDown, m.keys.Home, m.keys.End)
}

// Top shows the help from its first line, as it opens.
func (m *Model) Top() { m.offset = 0 }

// clampOffset keeps the offset where the last page is still full; n is the
// help's length in lines. One line of the screen is the hint below.
func (m Model) clampOffset(n int) int {
	if n <= m.height {
		return 0
	}
	return min(max(m.offset, 0), n-(m.height-1))
}

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
	// One line: the key list fills the rest of 80x24 to the last row.
	"Sparklines on a log scale. Hot rows highlighted, stronger at 10× and 100× --hot.",
}

// Legend is the help screen's explanation of the columns and marks, one
// line each, for the manual page too.
func Legend() []string { return slices.Clone(legend) }

// View lays the bindings out in as many columns as fit, then the legend.
// When that is taller than the screen, the last line says how much is
// below and how to see it.
func (m Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	lines := m.lines()
	if len(lines) <= m.height || m.height < 2 {
		return textutil.Fit(strings.Join(lines, "\n"), m.width, m.height)
	}
	off := m.clampOffset(len(lines))
	shown := lines[off : off+m.height-1]
	var hint string
	if below := len(lines) - off - len(shown); below > 0 {
		hint = fmt.Sprintf("↓ %d more lines  ↑/↓ PgUp/PgDn scroll", below)
	} else {
		hint = fmt.Sprintf("↑ %d lines above  any other key returns", off)
	}
	shown = append(slices.Clone(shown), m.th.Dim.Render(textutil.Truncate(hint, m.width)))
	return textutil.Fit(strings.Join(shown, "\n"), m.width, m.height)
}

// lines is the whole help, one screen line each.
func (m Model) lines() []string {
	var all []key.Binding
	for _, g := range m.keys.FullHelp() {
		for _, b := range g {
			if b.Enabled() { // a disabled key does nothing here
				all = append(all, b)
			}
		}
	}
	const keyW, descW = 5, 19
	cellW := keyW + 1 + descW + 1
	cols := max((m.width+1)/cellW, 1)
	rows := (len(all) + cols - 1) / cols
	lines := m.extraLines()
	title := len(lines)
	lines = append(lines, "")
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
		// Wrapped, not cut: paging reaches every word of it.
		for _, w := range textutil.Wrap(l, m.width) {
			lines = append(lines, m.th.Dim.Render(w))
		}
	}
	how := "  (any key returns)"
	if len(lines) > m.height {
		how = "  (↑/↓ scroll, other keys return)"
	}
	lines[title] = m.th.Title.Render("keys") + m.th.Dim.Render(how)
	return lines
}
