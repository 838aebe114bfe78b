package table

// What a click on the table hits. y counts lines from the table's top,
// its column header being line 0; x counts cells from the left edge.

// ClickRow selects the row drawn on line y; it reports whether a row was
// there (not the header, the remainder line or the blank below the rows).
func (m *Model) ClickRow(y int) bool {
	if y < 1 || y > m.bodyRows() {
		return false
	}
	i := m.offset + y - 1
	if i >= len(m.rows) {
		return false
	}
	m.moveTo(i)
	return true
}

// ClickHeader sorts by the column drawn at x, as htop does: a click on
// the sort column reverses it. It reports whether a sortable column was
// there.
func (m *Model) ClickHeader(x int) bool {
	cols, widths := m.layout()
	left := 0
	for i, c := range cols {
		if x >= left && x < left+widths[i] {
			if !spec(c).Sortable {
				return false
			}
			if c == m.sortCol {
				m.reverse = !m.reverse
			} else {
				m.sortCol, m.reverse = c, false
			}
			m.rebuild()
			return true
		}
		left += widths[i] + 1
	}
	return false
}

// Scroll moves the selection by delta rows (the mouse wheel).
func (m *Model) Scroll(delta int) { m.moveTo(m.cursor + delta) }

// SortTitle is the sort column's title, as the settings file keeps it.
func (m Model) SortTitle() string { return spec(m.sortCol).Title }

// SetSort sorts by the column titled title (as SortTitle gives it), in
// reverse when reverse is set; an unknown or unsortable title is ignored
// and reported false.
func (m *Model) SetSort(title string, reverse bool) bool {
	for c := range numColumns {
		if f := spec(c); f.Sortable && f.Title == title {
			m.sortCol, m.reverse = c, reverse
			m.rebuild()
			return true
		}
	}
	return false
}
