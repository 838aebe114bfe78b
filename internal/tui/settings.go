package tui

import (
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ctxtop/ctxtop/internal/settings"
	"github.com/ctxtop/ctxtop/internal/tui/colpanel"
	"github.com/ctxtop/ctxtop/internal/tui/table"
)

// applySettings restores the view a previous run left (Options.Settings);
// the caller has already let the command line override them.
func (m *Model) applySettings(s settings.Settings) {
	switch s.View {
	case "processes":
		m.table.SetProcesses(true)
	case "cgroups":
		m.table.SetCgroups(true)
	}
	if s.Tree {
		// The tree is a way of showing threads: kept, and shown once
		// the rows are threads again.
		m.table.SetTree(true)
		switch s.View {
		case "processes":
			m.table.SetProcesses(true)
		case "cgroups":
			m.table.SetCgroups(true)
		}
	}
	m.table.SetGrouped(s.Grouped)
	if s.Sort != "" {
		m.table.SetSort(s.Sort, s.Reverse)
	}
	m.table.SetFilter(s.Filter)
	for i, v := range settings.Views {
		// A kind this version does not know is another version's.
		m.table.SetHidden(table.Mode(i), s.Hidden[v])
	}
}

// Settings is the view to keep for the next run.
func (m *Model) Settings() settings.Settings {
	_, rev := m.table.Sort()
	s := settings.Settings{
		View:    rowKind(&m.table),
		Tree:    m.table.Tree(),
		Grouped: m.table.Grouped(),
		Sort:    m.table.SortTitle(),
		Reverse: rev,
		Filter:  m.table.Filter(),
	}
	for i, v := range settings.Views {
		if h := m.table.Hidden(table.Mode(i)); len(h) > 0 {
			if s.Hidden == nil {
				s.Hidden = map[string][]string{}
			}
			s.Hidden[v] = h
		}
	}
	if m.interval != time.Second {
		s.Interval = m.interval.String()
	}
	if s.View == "threads" {
		s.View = ""
	}
	return s
}

// handleColumnsKey answers a key in the columns panel: the arrows move,
// space shows or hides the column under the cursor, and Esc, Enter, q or
// the key that opened it close it; any other key does nothing, so that a
// stray one does not act on the table behind.
func (m *Model) handleColumnsKey(k tea.KeyPressMsg) {
	cols := m.table.Columns()
	switch {
	case key.Matches(k, m.keys.Back, m.keys.Detail, m.keys.Columns) || k.String() == "q":
		m.view = viewTable
	case k.String() == "space" || k.String() == "x":
		if m.colCursor < len(cols) {
			m.table.ToggleColumn(cols[m.colCursor].Col)
		}
	case key.Matches(k, m.keys.Up):
		m.colCursor = max(m.colCursor-1, 0)
	case key.Matches(k, m.keys.Down):
		m.colCursor = min(m.colCursor+1, len(cols)-1)
	case key.Matches(k, m.keys.Home, m.keys.PageUp):
		m.colCursor = 0
	case key.Matches(k, m.keys.End, m.keys.PageDown):
		m.colCursor = len(cols) - 1
	}
}

// columnsPanel is the columns panel as it stands: the table's columns of
// the current row kind, at the body's size.
func (m *Model) columnsPanel() colpanel.Model {
	p := colpanel.New(m.th)
	p.SetSize(m.width, max(m.height-m.header.Height()-1-m.panelHeight()-m.replayHeight(), 0))
	p.SetColumns(rowKindNoun(&m.table), m.table.Columns(), m.width)
	p.SetCursor(m.colCursor)
	return p
}

// rowKindNoun names one row of the table, for the columns panel's title.
func rowKindNoun(t *table.Model) string {
	switch t.Mode() {
	case table.ModeProcesses:
		return "process"
	case table.ModeCgroups:
		return "cgroup"
	}
	return "thread"
}
