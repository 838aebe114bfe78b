// Package wakegraph is the wake-up graph view (W): one row per (waker
// thread → wakee thread) pair, busiest first, with the share of wake-ups
// that crossed CPUs and the wakee's wake-to-run latency. It filters, sorts
// and scrolls like the thread table; Enter asks the root to open the
// wakee's detail.
package wakegraph

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ctxtop/ctxtop/internal/fields"
	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/sorts"
	"github.com/ctxtop/ctxtop/internal/tui/filter"
	"github.com/ctxtop/ctxtop/internal/tui/keys"
	"github.com/ctxtop/ctxtop/internal/tui/textutil"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
)

// OpenMsg asks the root to show the detail of a wakee thread.
type OpenMsg struct {
	PID, TID int
	Comm     string
}

// Column is a sortable column: an index into fields.Wakeup, whose
// entries say each column's title, width, when it drops, and how its cells
// read.
type Column int

// The columns, left to right, in fields.Wakeup's order.
const (
	ColWakerPID Column = iota
	ColWakerTID
	ColWaker
	ColWakeePID
	ColWakeeTID
	ColWakee
	ColRate
	ColCross
	ColP50
	ColP99
	numColumns
)

func spec(c Column) *fields.Column[*model.WakeupPair] { return &fields.Wakeup[c] }

// minName is how narrow a name column may get before columns are dropped.
const minName = 8

// Model is the wake-up view.
type Model struct {
	th            theme.Theme
	keys          keys.Map
	width, height int

	w         *model.Wakeups
	rows      []model.WakeupPair
	filter    string
	filtering bool
	sortCol   Column
	reverse   bool
	cursor    int
	offset    int
	// selected keeps the cursor on the same pair across refreshes.
	selected [2]int
}

// New returns an empty wake-up view, sorted by wake-ups/s.
func New(th theme.Theme, km keys.Map) Model {
	return Model{th: th, keys: km, sortCol: ColRate}
}

// SetSize sets the space the view may use.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.scroll()
}

// SetTheme swaps the styles.
func (m *Model) SetTheme(th theme.Theme) { m.th = th }

// SetWakeups shows w; nil means the first figures are not in yet.
func (m *Model) SetWakeups(w *model.Wakeups) {
	m.w = w
	m.rebuild()
}

// Filtering is true while the filter is being typed.
func (m Model) Filtering() bool { return m.filtering }

// Filter is the filter text.
func (m Model) Filter() string { return m.filter }

// Sort is the sort column and whether it is reversed.
func (m Model) Sort() (Column, bool) { return m.sortCol, m.reverse }

// Rows are the pairs shown, in order.
func (m Model) Rows() []model.WakeupPair { return m.rows }

// Handles says whether the view wants k for itself: everything while the
// filter is typed, and its navigation, sort, filter and Enter keys.
func (m Model) Handles(k tea.KeyPressMsg) bool {
	km := m.keys
	return m.filtering || key.Matches(k, km.Up, km.Down, km.PageUp, km.PageDown, km.Home, km.End,
		km.SortLeft, km.SortRight, km.Reverse, km.Filter, km.Detail) ||
		(m.filter != "" && key.Matches(k, km.Back))
}

// Update handles the keys Handles claims.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	if m.filtering {
		m.filterKey(k)
		return m, nil
	}
	km := m.keys
	page := max(m.height-3, 1)
	switch {
	case key.Matches(k, km.Up):
		m.moveTo(m.cursor - 1)
	case key.Matches(k, km.Down):
		m.moveTo(m.cursor + 1)
	case key.Matches(k, km.PageUp):
		m.moveTo(m.cursor - page)
	case key.Matches(k, km.PageDown):
		m.moveTo(m.cursor + page)
	case key.Matches(k, km.Home):
		m.moveTo(0)
	case key.Matches(k, km.End):
		m.moveTo(len(m.rows) - 1)
	case key.Matches(k, km.SortLeft):
		m.sortBy(-1)
	case key.Matches(k, km.SortRight):
		m.sortBy(+1)
	case key.Matches(k, km.Reverse):
		m.reverse = !m.reverse
		m.rebuild()
	case key.Matches(k, km.Filter):
		m.filtering = true
	case key.Matches(k, km.Back):
		m.filter = ""
		m.rebuild()
	case key.Matches(k, km.Detail):
		if p, ok := m.Selected(); ok {
			open := OpenMsg{PID: p.WakeePID, TID: p.WakeeTID, Comm: p.WakeeComm}
			return m, func() tea.Msg { return open }
		}
	}
	return m, nil
}

func (m *Model) filterKey(k tea.KeyPressMsg) {
	m.filter, m.filtering = filter.Edit(m.filter, k)
	m.rebuild()
}

// Selected is the pair under the cursor.
func (m Model) Selected() (model.WakeupPair, bool) {
	if m.cursor < 0 || m.cursor >= len(m.rows) {
		return model.WakeupPair{}, false
	}
	return m.rows[m.cursor], true
}

// sortBy moves the sort key by delta columns, skipping those hidden at
// this width, as the thread table does: a sort by a column one cannot see
// has no marker and looks random.
func (m *Model) sortBy(delta int) {
	cols, _ := m.layout()
	c := m.sortCol
	for range numColumns {
		c = (c + Column(delta) + numColumns) % numColumns
		if slices.Contains(cols, c) {
			break
		}
	}
	m.sortCol = c
	m.reverse = false
	m.rebuild()
}

// matches keeps a pair when either side's name holds the filter (lower
// case, as lower is), or either side's PID or TID starts with it, as in
// the thread table.
func matches(p *model.WakeupPair, filter, lower string) bool {
	if strings.Contains(strings.ToLower(p.WakerComm), lower) || strings.Contains(strings.ToLower(p.WakeeComm), lower) {
		return true
	}
	for _, id := range [...]int{p.WakerPID, p.WakerTID, p.WakeePID, p.WakeeTID} {
		// An interrupt's negative number is no ID anyone types.
		if id >= 0 && strings.HasPrefix(strconv.Itoa(id), filter) {
			return true
		}
	}
	return false
}

func (m *Model) rebuild() {
	m.rows = m.rows[:0]
	if m.w != nil {
		lower := strings.ToLower(m.filter)
		for i := range m.w.Pairs {
			if m.filter == "" || matches(&m.w.Pairs[i], m.filter, lower) {
				m.rows = append(m.rows, m.w.Pairs[i])
			}
		}
	}
	sorts.StableFunc(m.rows, func(a, b model.WakeupPair) int {
		c := compare(m.sortCol, &a, &b)
		if m.reverse {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(a.WakerTID, b.WakerTID), cmp.Compare(a.WakeeTID, b.WakeeTID))
	})
	m.cursor = 0
	for i, r := range m.rows {
		if [2]int{r.WakerTID, r.WakeeTID} == m.selected {
			m.cursor = i
		}
	}
	m.scroll()
}

// compare orders IDs smallest first, figures busiest (largest) first and
// names alphabetically, as the thread table does.
func compare(c Column, a, b *model.WakeupPair) int {
	switch f := spec(c); f.Kind {
	case fields.Integer:
		return cmp.Compare(f.Value(a), f.Value(b))
	case fields.Name:
		return strings.Compare(f.Str(a), f.Str(b))
	default:
		return cmp.Compare(f.Value(b), f.Value(a))
	}
}

func (m *Model) moveTo(i int) {
	if len(m.rows) == 0 {
		m.cursor = 0
		return
	}
	m.cursor = min(max(i, 0), len(m.rows)-1)
	r := m.rows[m.cursor]
	m.selected = [2]int{r.WakerTID, r.WakeeTID}
	m.scroll()
}

// bodyRows is how many pairs fit under the status and header lines.
func (m Model) bodyRows() int { return max(m.height-2, 0) }

func (m *Model) scroll() {
	n := m.bodyRows()
	if n <= 0 {
		m.offset = 0
		return
	}
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+n {
		m.offset = m.cursor - n + 1
	}
	m.offset = min(m.offset, max(len(m.rows)-n, 0))
}

// layout picks the columns that fit and their widths: drop the most
// droppable columns until the rest fit with names at least minName wide,
// then give names the room left, up to their full width.
func (m Model) layout() ([]Column, []int) {
	var cols []Column
	for level := 3; level >= 0; level-- {
		cols = cols[:0]
		fixed := 0
		for c := range numColumns {
			if spec(c).Drop > level {
				continue
			}
			cols = append(cols, c)
			if c != ColWaker && c != ColWakee {
				fixed += spec(c).Width
			}
		}
		fixed += len(cols) + 2 // separators, and " → " after the waker
		if fixed+2*minName <= m.width || level == 0 {
			name := min(max((m.width-fixed)/2, 1), spec(ColWaker).Width)
			widths := make([]int, len(cols))
			for i, c := range cols {
				widths[i] = spec(c).Width
				if c == ColWaker || c == ColWakee {
					widths[i] = name
				}
			}
			return cols, widths
		}
	}
	return nil, nil
}

// View renders a status line, the column header and the pairs.
func (m Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	th := m.th
	if m.w != nil && m.w.Unavailable != "" && !m.filtering {
		// The reason and the way out are the whole view: keep all of it.
		var lines []string
		for _, l := range strings.Split(ansi.Wrap(m.w.Unavailable, m.width, ""), "\n") {
			lines = append(lines, th.Error.Render(l))
		}
		return textutil.Fit(strings.Join(lines, "\n"), m.width, m.height)
	}
	lines := []string{m.status()}
	if m.w != nil && m.w.Unavailable == "" {
		cols, widths := m.layout()
		lines = append(lines, m.headerLine(cols, widths))
		end := min(m.offset+m.bodyRows(), len(m.rows))
		for i := m.offset; i < end; i++ {
			l := m.rowLine(&m.rows[i], cols, widths)
			if i == m.cursor {
				l = th.Selected.Render(textutil.PadRight(l, m.width))
			}
			lines = append(lines, l)
		}
	}
	return textutil.Fit(strings.Join(lines, "\n"), m.width, m.height)
}

func (m Model) status() string {
	th := m.th
	switch {
	case m.filtering:
		return filter.Prompt(th, m.filter, m.width)
	case m.w == nil:
		return th.Dim.Render(textutil.Truncate("wake-ups: attaching; first figures after a whole refresh", m.width))
	}
	parts := []string{th.Title.Render("wake-ups") + " " + fmt.Sprintf("%d pairs", len(m.w.Pairs))}
	if m.filter != "" {
		parts = append(parts, fmt.Sprintf("/%s %d shown", m.filter, len(m.rows)))
	}
	if m.w.Dropped > 0 {
		parts = append(parts, th.Hot[2].Render(fmt.Sprintf("%s not counted: pair map full", format.Thousands(float64(m.w.Dropped)))))
	}
	parts = append(parts, th.Dim.Render("Enter wakee detail  W back"))
	return textutil.JoinFitting(parts, "  ", m.width)
}

func (m Model) headerLine(cols []Column, widths []int) string {
	var b strings.Builder
	for i, c := range cols {
		t := spec(c).Title
		if c == m.sortCol {
			mark := "▾"
			if m.reverse {
				mark = "▴"
			}
			t = mark + t
		}
		b.WriteString(m.align(c, t, widths[i]))
		b.WriteString(sep(c))
	}
	return m.th.ColumnHeader.Render(textutil.PadRight(b.String(), m.width))
}

func (m Model) align(c Column, s string, w int) string {
	if spec(c).TextLeft {
		return textutil.PadRight(s, w)
	}
	return textutil.PadLeft(s, w)
}

// sep follows a column: an arrow from the waker's side to the wakee's.
func sep(c Column) string {
	if c == ColWaker {
		return " → "
	}
	return " "
}

func (m Model) rowLine(p *model.WakeupPair, cols []Column, widths []int) string {
	var b strings.Builder
	for i, c := range cols {
		b.WriteString(m.align(c, cell(spec(c), p, widths[i]), widths[i]))
		b.WriteString(sep(c))
	}
	return b.String()
}

// cell is a pair's cell of column f in w cells: "-" for a figure the pair
// does not have (an interrupt is no thread; a latency not yet timed).
func cell(f *fields.Column[*model.WakeupPair], p *model.WakeupPair, w int) string {
	if f.Known != nil && !f.Known(p) {
		return "-"
	}
	switch f.Kind {
	case fields.Integer:
		return strconv.Itoa(int(f.Value(p)))
	case fields.Rate:
		return format.Rate(f.Value(p), w)
	case fields.Percent:
		return format.Percent(f.Value(p))
	case fields.Micros:
		return format.Micros(f.Value(p))
	}
	return f.Str(p)
}
