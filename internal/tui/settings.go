package tui

import (
	"time"

	"github.com/ctxtop/ctxtop/internal/settings"
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
	if m.interval != time.Second {
		s.Interval = m.interval.String()
	}
	if s.View == "threads" {
		s.View = ""
	}
	return s
}
