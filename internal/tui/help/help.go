// Package help is the full key list, opened with ? or h.
package help

import (
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
}

// New returns the help screen for km.
func New(th theme.Theme, km keys.Map) Model { return Model{th: th, keys: km} }

// Update has nothing of its own to handle.
func (m Model) Update(tea.Msg) (Model, tea.Cmd) { return m, nil }

// SetSize sets the space the view may use.
func (m *Model) SetSize(w, h int) { m.width, m.height = w, h }

// SetTheme swaps the styles.
func (m *Model) SetTheme(th theme.Theme) { m.th = th }

// View lays the bindings out in as many columns as fit.
func (m Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	var all []key.Binding
	for _, g := range m.keys.FullHelp() {
		all = append(all, g...)
	}
	const keyW, descW = 7, 28
	cellW := keyW + 1 + descW + 2
	cols := max(m.width/cellW, 1)
	rows := (len(all) + cols - 1) / cols
	lines := []string{m.th.Title.Render("keys") + m.th.Dim.Render("  (any key returns)")}
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
				cell += "  "
			}
			b.WriteString(cell)
		}
		lines = append(lines, b.String())
	}
	lines = append(lines, "", m.th.Dim.Render("Rows: hot threads are highlighted, stronger at 10× and 100× --hot; CPUS* = pinned."))
	return textutil.Fit(strings.Join(lines, "\n"), m.width, m.height)
}
