// Package colpanel is the panel where the table's columns are shown and
// hidden (htop's F2 Setup → Columns), opened with F2 or C.
package colpanel

import (
	"fmt"
	"strings"

	"github.com/ctxtop/ctxtop/internal/tui/table"
	"github.com/ctxtop/ctxtop/internal/tui/textutil"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
)

// Model is the columns panel. Its list is the table's, given afresh
// before each use (SetColumns): the table is the one copy of the truth,
// and the root keeps only the cursor and moves it.
type Model struct {
	th            theme.Theme
	width, height int
	// kind names the rows the columns are of ("thread", "process").
	kind   string
	cols   []table.ColumnChoice
	cursor int
	tableW int
}

// New returns an empty panel.
func New(th theme.Theme) Model { return Model{th: th} }

// SetSize sets the space the panel may use.
func (m *Model) SetSize(w, h int) { m.width, m.height = w, h }

// SetTheme swaps the styles.
func (m *Model) SetTheme(th theme.Theme) { m.th = th }

// SetColumns lists cols, the columns of rows of kind ("thread") in a table
// tableWidth cells wide.
func (m *Model) SetColumns(kind string, cols []table.ColumnChoice, tableWidth int) {
	m.kind, m.cols, m.tableW = kind, cols, tableWidth
	m.cursor = min(max(m.cursor, 0), max(len(cols)-1, 0))
}

// SetCursor puts the cursor on the i-th column (from 0), within the list.
func (m *Model) SetCursor(i int) { m.cursor = min(max(i, 0), max(len(m.cols)-1, 0)) }

// View draws the title, one line a column, and what the marks mean; the
// list scrolls with the cursor when the screen is short.
func (m Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	// The keys most needed first: a narrow screen cuts the last.
	title := m.th.Title.Render(m.kind+" columns") +
		m.th.Dim.Render("  space on/off  Esc close  ↑↓ move")
	lines := []string{textutil.Truncate(title, m.width)}
	titleW := 0
	for _, c := range m.cols {
		titleW = max(titleW, textutil.Width(c.Title))
	}
	// The legend goes first when room is short: the list is the point.
	legend := m.legend()
	room := m.height - 1
	if room-len(legend) < min(len(m.cols), 5) {
		legend = nil
	}
	room -= len(legend)
	room = max(room, 1)
	off := max(m.cursor-room+1, 0)
	end := min(off+room, len(m.cols))
	for i := off; i < end; i++ {
		lines = append(lines, m.line(m.cols[i], i == m.cursor, titleW))
	}
	if end-off < room && len(legend) > 0 {
		lines = append(lines, "")
	}
	lines = append(lines, legend...)
	return textutil.Fit(strings.Join(lines, "\n"), m.width, m.height)
}

func (m Model) line(c table.ColumnChoice, selected bool, titleW int) string {
	mark := "[ ]"
	if c.Shown {
		mark = "[x]"
	}
	var note string
	switch {
	case c.Locked:
		note = "always shown"
	case !c.Shown:
	case c.Absent:
		note = "when a row has one"
	case !c.Fits:
		note = fmt.Sprintf("no room at %d columns", m.tableW)
	}
	pointer := "  "
	if selected {
		pointer = "▸ "
	}
	s := pointer + mark + " " + textutil.PadRight(c.Title, titleW) + "  "
	if m.width >= 60 {
		// A narrow screen keeps the note, which says what the width does.
		s += textutil.PadRight(c.Desc, 23)
	}
	if note != "" {
		s += " " + note
	}
	s = textutil.PadRight(textutil.Truncate(s, m.width), m.width)
	switch {
	case selected:
		return m.th.Selected.Render(s)
	case !c.Shown || note != "" && !c.Locked:
		return m.th.Dim.Render(s)
	}
	return s
}

// legend says what a shown column that is not on screen means.
func (m Model) legend() []string {
	for _, c := range m.cols {
		if c.Shown && !c.Fits && !c.Absent {
			return []string{m.th.Dim.Render(textutil.Truncate(
				"a column with no room returns on a wider screen or when one is hidden", m.width))}
		}
	}
	return nil
}
