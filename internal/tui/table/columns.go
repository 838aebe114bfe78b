package table

import (
	"slices"
)

// The columns the user chose (htop's F2 Setup → Columns): each row kind
// keeps its own, since a cgroup row's columns are not a thread row's. A
// hidden column stays hidden at any width; the shown ones still drop by
// priority when the screen is too narrow for them all.

// ColumnChoice is one column of the current row kind, as the columns
// panel lists it.
type ColumnChoice struct {
	Col         Column
	Title, Desc string
	// Shown: not hidden by the user. Locked columns cannot be hidden.
	Shown, Locked bool
	// Fits says whether the column is on screen at this width; a shown
	// column that does not fit gave way to columns before it in priority.
	Fits bool
	// Absent says the column shows only when some row has a value for it
	// (CONTAINER, POD) and none has now.
	Absent bool
}

// locked says whether c cannot be hidden in rows of mode: a row's name
// and identity, and TOTAL/s, which the sort falls back to and the
// remainder line adds up to.
func locked(mode Mode, c Column) bool {
	switch c {
	case ColComm, ColTotal:
		return true
	case ColTID:
		return mode == ModeThreads
	case ColPID:
		return mode != ModeCgroups
	}
	return false
}

// titleIn is c's title in rows of mode, as the header shows it and the
// settings file keeps it.
func titleIn(mode Mode, c Column) string {
	if t := cgroupTitle(c); t != "" && mode == ModeCgroups {
		return t
	}
	if c == ColTID && mode == ModeProcesses {
		return "THR"
	}
	return spec(c).Title
}

// descIn is what c holds in rows of mode.
func descIn(mode Mode, c Column) string {
	switch {
	case mode == ModeCgroups:
		switch c {
		case ColPID:
			return "processes in it"
		case ColTID:
			return "threads in it"
		case ColComm:
			return "cgroup name"
		case ColWait:
			return "CFS periods throttled"
		case ColCPUs:
			return "CPU limit, in CPUs"
		}
	case mode == ModeProcesses:
		switch c {
		case ColTID:
			return "threads in it"
		case ColComm:
			return "process name"
		}
	}
	return spec(c).Desc
}

// offered says whether rows of mode can have column c at all, hidden or
// not; CONTAINER and POD are offered whether or not a row has one now.
func (m Model) offered(mode Mode, c Column) bool {
	switch c {
	case ColContainer, ColPod:
		return mode != ModeCgroups
	}
	f := spec(c)
	return f.Shown() && (!f.Numeric() || f.Summed() || mode == ModeThreads)
}

// Columns lists every column of the current row kind, in table order.
func (m Model) Columns() []ColumnChoice {
	mode := m.Mode()
	fits := m.shown()
	var out []ColumnChoice
	for c := range numColumns {
		if !m.offered(mode, c) {
			continue
		}
		absent := c == ColContainer && !m.containers || c == ColPod && !m.pods
		out = append(out, ColumnChoice{
			Col: c, Title: titleIn(mode, c), Desc: descIn(mode, c),
			Shown: !m.hiddenCols[mode][c], Locked: locked(mode, c), Fits: fits[c], Absent: absent,
		})
	}
	return out
}

// ToggleColumn hides column c of the current row kind, or shows it again;
// a locked column stays. A sort by the column hidden gives way to TOTAL/s:
// a sort one cannot see has no marker and looks random.
func (m *Model) ToggleColumn(c Column) {
	mode := m.Mode()
	if c < 0 || c >= numColumns || locked(mode, c) {
		return
	}
	m.hiddenCols[mode][c] = !m.hiddenCols[mode][c]
	m.rebuild()
}

// SetHidden hides the columns of rows of mode titled titles (as Hidden
// gives them) and shows the rest. A title no column of that kind has, left
// by another version or a hand edit, is ignored, as is a locked column.
func (m *Model) SetHidden(mode Mode, titles []string) {
	if mode < ModeThreads || mode > ModeCgroups {
		return
	}
	var h [numColumns]bool
	for c := range numColumns {
		h[c] = m.offered(mode, c) && !locked(mode, c) && slices.Contains(titles, titleIn(mode, c))
	}
	m.hiddenCols[mode] = h
	m.rebuild()
}

// Hidden is the titles of the columns hidden in rows of mode, nil for none.
func (m Model) Hidden(mode Mode) []string {
	if mode < ModeThreads || mode > ModeCgroups {
		return nil
	}
	var out []string
	for c := range numColumns {
		if m.hiddenCols[mode][c] {
			out = append(out, titleIn(mode, c))
		}
	}
	return out
}
