// Package table is the TUI's main list: one row per thread, process or
// name group, sortable, filterable, with the selection following its row
// across refreshes the way htop's does.
package table

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ctxtop/ctxtop/internal/fields"
	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/sanitize"
	"github.com/ctxtop/ctxtop/internal/sorts"
	"github.com/ctxtop/ctxtop/internal/tui/keys"
	"github.com/ctxtop/ctxtop/internal/tui/textutil"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
)

// Column names a table column: a field of package fields, which holds
// each one's title, width, priority and value.
type Column = fields.ID

// The columns the table treats apart from the rest; the others are drawn
// from the field table alone.
const (
	ColPID         = fields.PID
	ColTID         = fields.TID
	ColComm        = fields.Comm
	ColContainer   = fields.Container
	ColPod         = fields.Pod
	ColVoluntary   = fields.Voluntary
	ColInvoluntary = fields.Involuntary
	ColTotal       = fields.Total
	ColCPU         = fields.CPU
	ColWait        = fields.Wait
	ColCPUs        = fields.CPUs
	ColReason      = fields.Reason
	numColumns     = fields.Count
)

// spec is a column's field.
func spec(c Column) *fields.Field { return &fields.Thread[c] }

// Model is the table component.
type Model struct {
	th            theme.Theme
	keys          keys.Map
	width, height int
	hot           float64

	snap *model.Snapshot
	// unattributedWhy, when set, replaces model.UnattributedWhy.
	unattributedWhy string
	processes       bool
	grouped         bool
	filter          string
	sortCol         Column
	reverse         bool
	load            isLoad

	rows     []Row
	cursor   int
	offset   int
	selected string
	// picked is set once the user moved the cursor: only then does the
	// selection follow its row. Before, the cursor stays on the top row, as
	// in top, so the busiest rows are never scrolled away by a row that was
	// merely first when the monitor started.
	picked bool

	// cgroups shows one row per cgroup (cgroups.go); cgroupFilter limits
	// thread rows to one cgroup.
	cgroups      bool
	cgroupFilter string

	// tree shows each process above its threads (tree.go); folded are the
	// PIDs whose threads it hides.
	tree   bool
	folded map[int]bool
	// foldedGroups are the keys of the namespaces and pods whose rows the
	// cgroup view's tree hides.
	foldedGroups map[string]bool
	// containers and pods say whether the snapshot has a cgroup with a
	// container, or a pod: only then do the CONTAINER and POD columns show.
	containers, pods bool
	// hiddenCols are the columns the user hid, per row kind (columns.go).
	hiddenCols [ModeCgroups + 1][numColumns]bool
}

// New returns an empty table; hot is the --hot threshold, used to grade
// the highlight of hot rows.
func New(th theme.Theme, km keys.Map, hot float64) Model {
	return Model{th: th, keys: km, hot: hot, sortCol: ColTotal}
}

// SetSize sets the table's width and height, header line included. A sort
// column the new width hides gives way to TOTAL/s, which always shows.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	if w > 0 && !m.shown()[m.sortCol] {
		m.sortCol, m.reverse = ColTotal, false
		m.rebuild()
	}
	m.scroll()
}

// has says whether rows of the current kind have column c and the user
// did not hide it: a field only
// threads have is left out of process and cgroup rows.
func (m Model) has(c Column) bool {
	if m.hiddenCols[m.Mode()][c] {
		return false
	}
	switch c {
	case ColContainer:
		return m.containers && !m.cgroups
	case ColPod:
		return m.pods && !m.cgroups
	}
	f := spec(c)
	return f.Shown() && (!f.Numeric() || f.Summed() || !m.processes && !m.cgroups)
}

// shown says which columns fit the current width.
func (m Model) shown() (in [numColumns]bool) {
	cols, _ := m.layout()
	for _, c := range cols {
		in[c] = true
	}
	return in
}

// SetTheme swaps the styles.
func (m *Model) SetTheme(th theme.Theme) { m.th = th }

// SetUnattributedWhy replaces the remainder row's explanation: under
// hidepid its switches are mostly other users' hidden processes'.
func (m *Model) SetUnattributedWhy(why string) { m.unattributedWhy = why }

// SetSnapshot replaces the data, keeping the selected row selected.
func (m *Model) SetSnapshot(s *model.Snapshot) {
	m.snap = s
	m.containers, m.pods = false, false
	if s != nil {
		for i := range s.Cgroups {
			if c := s.Cgroups[i].Container; c != nil {
				m.containers = true
				m.pods = m.pods || c.PodUID != ""
			}
		}
	}
	m.rebuild()
}

// SetLoad marks the rows of ctxtop's own load generator; nil clears it.
func (m *Model) SetLoad(f func(pid, tid int) bool) {
	m.load = f
	m.rebuild()
}

// SetProcesses switches between thread rows and process rows.
func (m *Model) SetProcesses(on bool) {
	if m.processes == on && !m.cgroups {
		return
	}
	m.processes, m.cgroups = on, false
	// The old key names a row of the other kind: start at the top.
	m.selected, m.cursor, m.offset, m.picked = "", 0, 0, false
	m.rebuild()
}

// Processes says whether rows are processes.
func (m Model) Processes() bool { return m.processes }

// SetGrouped turns name-pattern grouping on or off.
func (m *Model) SetGrouped(on bool) {
	if m.grouped == on {
		return
	}
	m.grouped = on
	m.selected, m.cursor, m.offset, m.picked = "", 0, 0, false
	m.rebuild()
}

// Grouped says whether rows are grouped by name pattern.
func (m Model) Grouped() bool { return m.grouped }

// SetFilter shows only rows whose name contains f or whose PID or TID
// starts with it.
func (m *Model) SetFilter(f string) {
	m.filter = f
	m.rebuild()
}

// Filter is the current filter text.
func (m Model) Filter() string { return m.filter }

// SortBy moves the sort key by delta columns, skipping unsortable ones and
// those hidden at this width: a sort by a column one cannot see has no
// marker and looks random.
func (m *Model) SortBy(delta int) {
	shown := m.shown()
	c := m.sortCol
	for range numColumns {
		c = (c + Column(delta) + numColumns) % numColumns
		if spec(c).Sortable && shown[c] {
			break
		}
	}
	m.sortCol = c
	m.reverse = false
	m.rebuild()
}

// Reverse flips the sort order.
func (m *Model) Reverse() {
	m.reverse = !m.reverse
	m.rebuild()
}

// Sort is the sort column and whether it is reversed.
func (m Model) Sort() (Column, bool) { return m.sortCol, m.reverse }

// Rows are the rows shown, in order.
func (m Model) Rows() []Row { return m.rows }

// Selected is the selected row, if any.
func (m Model) Selected() (Row, bool) {
	if m.cursor < 0 || m.cursor >= len(m.rows) {
		return Row{}, false
	}
	return m.rows[m.cursor], true
}

// Update moves the selection on navigation keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	page := max(m.bodyRows()-1, 1)
	switch {
	case key.Matches(k, m.keys.Up):
		m.moveTo(m.cursor - 1)
	case key.Matches(k, m.keys.Down):
		m.moveTo(m.cursor + 1)
	case key.Matches(k, m.keys.PageUp):
		m.moveTo(m.cursor - page)
	case key.Matches(k, m.keys.PageDown):
		m.moveTo(m.cursor + page)
	case key.Matches(k, m.keys.Home):
		m.moveTo(0)
		m.picked = false
		return m, nil
	case key.Matches(k, m.keys.End):
		m.moveTo(len(m.rows) - 1)
	}
	return m, nil
}

// Select moves the selection to the row whose Key is key, when it is shown.
func (m *Model) Select(key string) {
	if i := slices.IndexFunc(m.rows, func(r Row) bool { return r.Key == key }); i >= 0 {
		m.moveTo(i)
	}
}

func (m *Model) moveTo(i int) {
	if len(m.rows) == 0 {
		m.cursor, m.selected = 0, ""
		return
	}
	m.cursor = min(max(i, 0), len(m.rows)-1)
	m.selected = m.rows[m.cursor].Key
	m.picked = true
	m.scroll()
}

func (m *Model) rebuild() {
	if m.hiddenCols[m.Mode()][m.sortCol] {
		// The user hid the sort column (here, or in the row kind just
		// switched to): TOTAL/s, which cannot be hidden, takes over.
		m.sortCol, m.reverse = ColTotal, false
	}
	if m.snap == nil {
		m.rows = nil
		return
	}
	var rows []Row
	switch {
	case m.cgroups:
		rows = cgroupRows(m.snap.Cgroups)
	case m.processes:
		rows = processRows(m.snap.Processes, m.load)
	default:
		rows = threadRows(m.snap.Threads, m.load)
	}
	if m.cgroupFilter != "" && !m.cgroups {
		rows = slices.DeleteFunc(rows, func(r Row) bool { return r.Cgroup != m.cgroupFilter })
	}
	if m.grouped && !m.cgroups {
		rows = group(rows, m.processes)
	}
	if m.filter != "" {
		rows = slices.DeleteFunc(rows, func(r Row) bool { return !matches(r, m.filter) })
	}
	switch {
	case m.cgroups:
		rows = m.cgroupTree(rows, model.CgroupGroups(m.snap.Cgroups))
	case m.treeShown():
		rows = m.treeRows(rows, m.snap.Processes)
	default:
		m.sortRows(rows)
	}
	m.rows = rows

	// Follow the selected row by key; if it went away, stay at the same
	// position so the cursor does not jump to the top.
	if !m.picked {
		m.cursor, m.offset = 0, 0
	}
	if m.picked && m.selected != "" {
		if i := slices.IndexFunc(rows, func(r Row) bool { return r.Key == m.selected }); i >= 0 {
			m.cursor = i
			m.scroll()
			return
		}
	}
	m.cursor = min(m.cursor, max(len(rows)-1, 0))
	if len(rows) > 0 {
		m.selected = rows[m.cursor].Key
	}
	m.scroll()
}

func (m *Model) sortRows(rows []Row) {
	num := func(r Row) float64 {
		switch m.sortCol {
		case ColPID:
			return float64(r.PID)
		case ColTID:
			if m.processes {
				return float64(r.Count) // the THR column
			}
			return float64(r.TID)
		}
		return r.Vals[m.sortCol]
	}
	// Rates sort busiest first, names and IDs ascending, as in top.
	ascending := spec(m.sortCol).Ascending
	if m.reverse {
		ascending = !ascending
	}
	slices.SortStableFunc(rows, func(a, b Row) int {
		var c int
		switch m.sortCol {
		case ColComm:
			c = strings.Compare(a.Comm, b.Comm)
		case ColContainer:
			c = strings.Compare(a.Container.Label(), b.Container.Label())
		case ColPod:
			c = strings.Compare(podCell(a.Container), podCell(b.Container))
		default:
			c = cmp.Compare(num(a), num(b))
		}
		if !ascending {
			c = -c
		}
		if c == 0 {
			// A fixed tie-break keeps equal rows from swapping each
			// refresh; IDs compare as numbers (9654 before 12137).
			c = cmp.Or(cmp.Compare(a.PID, b.PID), cmp.Compare(a.TID, b.TID), cmp.Compare(a.Key, b.Key))
		}
		return c
	})
}

// remainderShown says whether the last line holds the switches no row
// holds, so the rows and the header's cs/s reconcile on screen. It is
// there whenever the rows are the whole host, 0 included: under a load of
// hundreds of thousands of switches a second the threads, read a moment
// after /proc/stat, sum past the header about one refresh in three, and a
// line that came and went with that made the rows stop adding up.
func (m Model) remainderShown() bool {
	// A small table keeps its rows: the line is context, not the answer.
	return m.snap != nil && !m.snap.Partial && m.height >= 8
}

// bodyRows is how many rows fit under the header line.
func (m Model) bodyRows() int {
	if m.remainderShown() {
		return max(m.height-2, 1)
	}
	return max(m.height-1, 1)
}

func (m *Model) scroll() {
	visible := m.bodyRows()
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+visible {
		m.offset = m.cursor - visible + 1
	}
	m.offset = max(min(m.offset, len(m.rows)-visible), 0)
}

// layout picks the columns that fit the width, by priority, and their widths.
func (m Model) layout() ([]Column, []int) {
	order := make([]Column, 0, numColumns)
	for c := range numColumns {
		if m.has(c) {
			order = append(order, c)
		}
	}
	sorts.StableFunc(order, func(a, b Column) int { return cmp.Compare(spec(a).Priority, spec(b).Priority) })
	width := func(c Column) int {
		switch {
		case c == ColComm && m.cgroups && m.width >= 140:
			// Room for "namespace/pod/container" as a node names them.
			return 48
		case c == ColComm && m.cgroups && m.width >= 80:
			// Group names ("nginx.service", "pod <uid> (burstable) <id>")
			// run longer than thread names.
			return 24
		case c == ColReason && m.width < 60:
			// A narrow screen keeps the numbers; the reason takes what is left.
			return 10
		case c == ColComm && m.width >= 60:
			// Thread names are at most 15 characters, and a pool's members
			// differ at the end: show them whole once there is room.
			return 15
		}
		return spec(c).Width
	}
	var chosen []Column
	used := -1
	for _, c := range order {
		if used+1+width(c) <= m.width {
			chosen = append(chosen, c)
			used += 1 + width(c)
		}
	}
	slices.Sort(chosen)
	widths := make([]int, len(chosen))
	for i, c := range chosen {
		widths[i] = width(c)
	}
	// Share what is left: names first, then the reason.
	spare := m.width - used
	for i, c := range chosen {
		most := spec(c).MaxWidth
		if c == ColComm && m.treeShown() {
			// The tree's marks take two cells before each name.
			most += 2
		}
		if most > 0 && spare > 0 {
			add := min(spare, most-widths[i])
			if add > 0 {
				widths[i] += add
				spare -= add
			}
		}
	}
	return chosen, widths
}

// View renders the header row and as many rows as fit.
func (m Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	cols, widths := m.layout()
	lines := make([]string, 0, m.height)
	lines = append(lines, m.headerLine(cols, widths))
	if len(m.rows) == 0 && m.height > 1 {
		msg := "no thread switched in the last interval"
		switch {
		case m.snap == nil:
			msg = "waiting for the first sample…"
		case m.filter != "":
			// As typed: Go's quoting would double a backslash, which a
			// user who typed one reads as a different filter.
			msg = `nothing matches the filter "` + sanitize.Name(m.filter) + `"`
		case m.processes:
			msg = "no process switched in the last interval"
		case m.cgroups:
			msg = "no cgroup switched in the last interval"
			if len(m.snap.Cgroups) == 0 && len(m.snap.Threads) > 0 {
				msg = "cgroups unknown here (no PID/cgroup files)"
			}
		}
		lines = append(lines, m.th.Dim.Render(textutil.Truncate(msg, m.width)))
	}
	end := min(m.offset+m.bodyRows(), len(m.rows))
	for i := m.offset; i < end; i++ {
		lines = append(lines, m.rowLine(m.rows[i], i == m.cursor, cols, widths))
	}
	if m.remainderShown() {
		for len(lines) < m.height-1 {
			lines = append(lines, "")
		}
		lines = append(lines, m.remainderLine(cols, widths))
	}
	return strings.Join(lines, "\n")
}

// remainderLine is the header's cs/s less the sum over every thread, laid
// out as a row: switches of threads that exited or lived less than an
// interval, and switches into the idle task.
func (m Model) remainderLine(cols []Column, widths []int) string {
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(' ')
		}
		s := "-"
		switch c {
		case ColComm:
			s = "(no thread row)"
		case ColTotal:
			s = format.Rate(m.snap.UnattributedPerSec, widths[i])
		case ColReason:
			s = model.UnattributedWhy
			if m.unattributedWhy != "" {
				s = m.unattributedWhy
			}
		}
		if spec(c).Right {
			b.WriteString(textutil.PadLeft(s, widths[i]))
		} else {
			b.WriteString(textutil.PadRight(textutil.Truncate(s, widths[i]), widths[i]))
		}
	}
	return m.th.Dim.Render(textutil.PadRight(b.String(), m.width))
}

func (m Model) headerLine(cols []Column, widths []int) string {
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteString(m.th.ColumnHeader.Render(" "))
		}
		title := spec(c).Title
		if t := cgroupTitle(c); t != "" && m.cgroups {
			title = t
		}
		if c == ColTID && m.processes {
			title = "THR"
		}
		if c == ColPID && m.processes && m.grouped {
			title = "PIDS"
		}
		style := m.th.ColumnHeader
		if c == m.sortCol {
			arrow := "▼"
			if spec(c).Ascending != m.reverse {
				arrow = "▲"
			}
			title = arrow + title
			style = m.th.SortedColumn
		}
		if spec(c).Right {
			title = textutil.PadLeft(title, widths[i])
		} else {
			title = textutil.PadRight(title, widths[i])
		}
		b.WriteString(style.Render(title))
	}
	if pad := m.width - textutil.Width(b.String()); pad > 0 {
		b.WriteString(m.th.ColumnHeader.Render(strings.Repeat(" ", pad)))
	}
	return b.String()
}

func (m Model) cell(r Row, c Column, w int) string {
	if m.cgroups {
		if s, ok := cgroupCell(r, c); ok {
			return s
		}
	}
	if f := spec(c); f.Numeric() {
		v := r.Vals[c]
		switch {
		case math.IsNaN(v):
			return "-" // not known for this row
		case f.Kind == fields.Percent:
			return format.PercentIn(v, w)
		}
		return format.Rate(v, w)
	}
	switch c {
	case ColPID:
		if r.PID == 0 {
			return "×" + strconv.Itoa(r.Count)
		}
		return strconv.Itoa(r.PID)
	case ColTID:
		if m.processes {
			return strconv.Itoa(r.Count)
		}
		if m.treeShown() && r.Depth == 0 {
			return "" // its threads, below, have the TIDs
		}
		if r.TID == 0 {
			return "×" + strconv.Itoa(r.Count)
		}
		return strconv.Itoa(r.TID)
	case ColComm:
		if m.treeShown() {
			return treeComm(r)
		}
		return r.Mark + r.Comm
	case ColContainer:
		return r.Container.Label()
	case ColPod:
		return podCell(r.Container)
	case ColCPUs:
		if r.Pinned {
			return r.CPUs + "*"
		}
		return r.CPUs
	case ColReason:
		if r.Load {
			// The reason comes first: the row's colour and its thread
			// names already say it is the load.
			why := r.Why.String()
			if why != "" && textutil.Width("load: "+why) > w {
				return why
			}
			if why != "" {
				return "load: " + why
			}
			return "load generator"
		}
		return r.Why.String()
	}
	return ""
}

func (m Model) rowLine(r Row, selected bool, cols []Column, widths []int) string {
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(' ')
		}
		s := m.cell(r, c, widths[i])
		if spec(c).Right {
			b.WriteString(textutil.PadLeft(s, widths[i]))
		} else {
			b.WriteString(textutil.PadRight(s, widths[i]))
		}
	}
	line := textutil.PadRight(b.String(), m.width)
	switch {
	case selected:
		return m.th.Selected.Render(line)
	case r.Hot:
		return m.th.Hot[m.hotLevel(r)].Render(line)
	case r.Load:
		return m.th.Load.Render(line)
	}
	return line
}

// hotLevel grades a hot row by how far past the threshold it is: ×1, ×10, ×100.
func (m Model) hotLevel(r Row) int {
	if m.hot <= 0 {
		return 0
	}
	switch x := r.Total() / m.hot; {
	case x >= 100:
		return 2
	case x >= 10:
		return 1
	}
	return 0
}
