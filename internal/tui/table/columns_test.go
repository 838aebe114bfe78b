package table

import (
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/tui/keys"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// headTitles is the table's title line, one word a column.
func headTitles(t *testing.T, m Model) []string {
	t.Helper()
	return strings.Fields(tuitest.Render(t, strings.Split(m.View(), "\n")[0], colorprofile.NoTTY))
}

// A hidden column stays hidden at every width, the room it leaves goes to
// the columns that dropped for it, and the rest still drop by priority.
func TestHiddenColumnNeverShows(t *testing.T) {
	for _, c := range []struct {
		width int
		want  []string
	}{
		{40, []string{"PID", "TID", "COMM", "▼TOTAL/s"}},
		// CSW/s hidden: %CPU gets its room at 80.
		{80, []string{"PID", "TID", "COMM", "NVCSW/s", "▼TOTAL/s", "%CPU", "WHY"}},
		{200, []string{"PID", "TID", "COMM", "NVCSW/s", "▼TOTAL/s", "%CPU", "WAIT%", "MIGR/s", "WHY"}},
	} {
		m := New(theme.New(true, true), keys.New(), 1000)
		m.SetSize(c.width, 10)
		s := tuitest.Snapshot()
		m.SetSnapshot(&s)
		m.ToggleColumn(ColVoluntary)
		m.ToggleColumn(ColCPUs)
		if diff := cmp.Diff(c.want, headTitles(t, m)); diff != "" {
			t.Errorf("width %d: columns (-want +got)\n%s", c.width, diff)
		}
	}
}

// The goldens at 40x10 and 80x24 with columns hidden: every line fits.
func TestViewHidden(t *testing.T) {
	for _, sz := range []tuitest.Size{{Name: "80x24", Width: 80, Height: 24}, {Name: "40x10", Width: 40, Height: 10}} {
		t.Run(sz.Name, func(t *testing.T) {
			m := newTable(sz.Width, sz.Height-5)
			m.SetHidden(ModeThreads, []string{"CSW/s", "NVCSW/s", "CPUS"})
			got := tuitest.Render(t, m.View(), colorprofile.Ascii)
			tuitest.CheckFits(t, got, sz.Width, sz.Height-5)
			tuitest.Golden(t, sz.Name, got)
			if strings.Contains(got, "CSW/s") || strings.Contains(got, "CPUS") {
				t.Errorf("a hidden column shows:\n%s", got)
			}
		})
	}
}

// Each row kind keeps its own choice; identity columns and TOTAL/s stay.
func TestHiddenPerRowKindAndLocked(t *testing.T) {
	m := newTable(120, 10)
	m.ToggleColumn(ColWait)
	m.ToggleColumn(ColComm)
	m.ToggleColumn(ColTID)
	m.ToggleColumn(ColTotal)
	if diff := cmp.Diff([]string{"WAIT%"}, m.Hidden(ModeThreads)); diff != "" {
		t.Errorf("hidden in threads (-want +got)\n%s", diff)
	}
	m.SetCgroups(true)
	if got := headTitles(t, m); !contains(got, "THRT%") {
		t.Errorf("the cgroup view lost THRT%% hidden in the thread view: %v", got)
	}
	m.ToggleColumn(ColTID) // THR here, which may go
	m.ToggleColumn(ColPID) // PROCS
	if diff := cmp.Diff([]string{"PROCS", "THR"}, m.Hidden(ModeCgroups)); diff != "" {
		t.Errorf("hidden in cgroups (-want +got)\n%s", diff)
	}
	if got := headTitles(t, m); contains(got, "THR") || contains(got, "PROCS") || !contains(got, "CGROUP") {
		t.Errorf("cgroup columns %v", got)
	}
	m.SetProcesses(false)
	if got := headTitles(t, m); contains(got, "WAIT%") || !contains(got, "TID") {
		t.Errorf("back to threads: columns %v", got)
	}
}

// A saved title that no column has, or a locked one, is ignored; the
// rest round-trips through Hidden.
func TestSetHiddenIgnoresUnknownTitles(t *testing.T) {
	m := newTable(120, 10)
	m.SetHidden(ModeThreads, []string{"GONE/s", "COMM", "MIGR/s", "", "THRT%"})
	if diff := cmp.Diff([]string{"MIGR/s"}, m.Hidden(ModeThreads)); diff != "" {
		t.Errorf("hidden (-want +got)\n%s", diff)
	}
	m.SetHidden(Mode(7), []string{"PID"}) // no such kind: nothing happens
	m.SetHidden(ModeProcesses, []string{"MIGR/s", "THR"})
	if diff := cmp.Diff([]string{"THR"}, m.Hidden(ModeProcesses)); diff != "" {
		t.Errorf("processes hidden (-want +got)\n%s", diff)
	}
}

// Hiding the sort column hands the sort to TOTAL/s, which always shows.
func TestHidingTheSortColumn(t *testing.T) {
	m := newTable(120, 10)
	if !m.SetSort("%CPU", true) {
		t.Fatal("no sort by %CPU")
	}
	m.ToggleColumn(ColCPU)
	if c, rev := m.Sort(); c != ColTotal || rev {
		t.Errorf("sort %v reversed %v after hiding %%CPU, want TOTAL/s", c, rev)
	}
	if got := headTitles(t, m); !contains(got, "▼TOTAL/s") {
		t.Errorf("columns %v lack the sort marker on TOTAL/s", got)
	}
}

// The panel's list: every column of the row kind, whether it fits.
func TestColumnsListsTheRowKind(t *testing.T) {
	m := newTable(80, 10)
	m.ToggleColumn(ColCPU)
	var got []string
	for _, c := range m.Columns() {
		s := c.Title
		if !c.Shown {
			s += " hidden"
		}
		if c.Locked {
			s += " locked"
		}
		if c.Shown && !c.Fits && !c.Absent {
			s += " no room"
		}
		if c.Absent {
			s += " absent"
		}
		got = append(got, s)
	}
	want := []string{"PID locked", "TID locked", "COMM locked", "CONTAINER absent", "POD absent", "CSW/s", "NVCSW/s",
		"TOTAL/s locked", "%CPU hidden", "WAIT% no room", "MIGR/s no room", "CPUS no room", "WHY"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("columns at 80 (-want +got)\n%s", diff)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
