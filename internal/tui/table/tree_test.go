package table

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// keysOf are the rows' selection keys, in order.
func keysOf(m Model) []string {
	var k []string
	for _, r := range m.Rows() {
		k = append(k, r.Key)
	}
	return k
}

func TestTreeView(t *testing.T) {
	for _, sz := range tuitest.Sizes {
		t.Run(sz.Name, func(t *testing.T) {
			m := newTable(sz.Width, sz.Height-5)
			m.SetTree(true)
			got := tuitest.Render(t, m.View(), colorprofile.Ascii)
			tuitest.CheckFits(t, got, sz.Width, sz.Height-5)
			tuitest.Golden(t, sz.Name, got)
		})
	}
}

func TestTreeOrdersProcessesThenTheirThreads(t *testing.T) {
	m := newTable(80, 20)
	m.SetTree(true)
	want := []string{"p4242", "t4243", "t4244", "p901", "t911", "t912", "t913", "p1", "t1", "p777", "t777"}
	if diff := cmp.Diff(want, keysOf(m)); diff != "" {
		t.Errorf("tree by TOTAL/s (-want +got):\n%s", diff)
	}
	// Reversed: the quietest process first, and its quietest thread.
	m.Reverse()
	want = []string{"p777", "t777", "p1", "t1", "p901", "t913", "t912", "t911", "p4242", "t4244", "t4243"}
	if diff := cmp.Diff(want, keysOf(m)); diff != "" {
		t.Errorf("tree reversed (-want +got):\n%s", diff)
	}
}

func TestTreeFolds(t *testing.T) {
	m := newTable(80, 20)
	m.SetTree(true)
	// Down to pp-pong, fold: its process is selected and its threads hidden.
	m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	if r, _ := m.Selected(); r.Key != "t4244" {
		t.Fatalf("selected %s, want t4244", r.Key)
	}
	if !m.Fold(false) {
		t.Fatal("Fold(false) on a thread changed nothing")
	}
	if r, _ := m.Selected(); r.Key != "p4242" || !r.Folded {
		t.Errorf("after folding, selected %+v; want the folded process p4242", r)
	}
	want := []string{"p4242", "p901", "t911", "t912", "t913", "p1", "t1", "p777", "t777"}
	if diff := cmp.Diff(want, keysOf(m)); diff != "" {
		t.Errorf("folded (-want +got):\n%s", diff)
	}
	if v := tuitest.Render(t, m.View(), colorprofile.NoTTY); !strings.Contains(v, "▸ pingpong") {
		t.Errorf("the folded process is not marked ▸:\n%s", v)
	}
	if m.Fold(false) {
		t.Error("folding a folded process changed something")
	}
	m.Fold(true)
	if got := len(m.Rows()); got != 11 {
		t.Errorf("%d rows after unfolding, want 11", got)
	}
}

func TestTreeFiltersThreadsUnderTheirProcess(t *testing.T) {
	m := newTable(80, 20)
	m.SetTree(true)
	m.SetFilter("thread-2")
	if diff := cmp.Diff([]string{"p901", "t912"}, keysOf(m)); diff != "" {
		t.Errorf("filtered tree (-want +got):\n%s", diff)
	}
}

func TestTreeGivesWayToOtherViews(t *testing.T) {
	m := newTable(80, 20)
	m.SetTree(true)
	m.SetProcesses(true)
	if m.TreeShown() || strings.HasPrefix(keysOf(m)[1], "t") {
		t.Errorf("process view still shows the tree: %v", keysOf(m))
	}
	m.SetTree(true)
	if !m.TreeShown() || m.Processes() {
		t.Errorf("SetTree(true) from the process view: tree shown %v, processes %v", m.TreeShown(), m.Processes())
	}
}

func TestClickRowAndHeader(t *testing.T) {
	m := newTable(80, 12)
	if !m.ClickRow(3) {
		t.Fatal("a click on the third row hit nothing")
	}
	if r, _ := m.Selected(); r.Key != "t911" {
		t.Errorf("click on line 3 selected %s, want t911 (the third row)", r.Key)
	}
	if m.ClickRow(0) || m.ClickRow(11) {
		t.Error("a click on the header line or the remainder line selected a row")
	}
	// Columns at 80: PID(7) TID(7) COMM(15) CSW/s ...; x 1 is in PID.
	if !m.ClickHeader(1) {
		t.Fatal("a click on PID's title did not sort")
	}
	if c, rev := m.Sort(); c != ColPID || rev {
		t.Errorf("after one click on PID: sort %v reversed %v", c, rev)
	}
	m.ClickHeader(1)
	if c, rev := m.Sort(); c != ColPID || !rev {
		t.Errorf("after a second click on PID: sort %v reversed %v, want reversed", c, rev)
	}
	if m.ClickHeader(7) {
		t.Error("a click on the gap between two columns sorted")
	}
	if got := m.SortTitle(); got != "PID" {
		t.Errorf("SortTitle %q", got)
	}
	if !m.SetSort("%CPU", true) || m.SortTitle() != "%CPU" {
		t.Error("SetSort(%CPU) not applied")
	}
	if m.SetSort("WHY", false) || m.SetSort("bogus", false) {
		t.Error("SetSort accepted an unsortable or unknown column")
	}
}
