package wakegraph

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/fields"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/keys"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

func newModel(w, h int) Model {
	m := New(theme.New(false, true), keys.New())
	m.SetSize(w, h)
	m.SetWakeups(tuitest.Wakeups())
	return m
}

func TestView(t *testing.T) {
	for _, sz := range tuitest.Sizes {
		t.Run(sz.Name, func(t *testing.T) {
			m := newModel(sz.Width, sz.Height-5)
			got := tuitest.Render(t, m.View(), colorprofile.Ascii)
			tuitest.CheckFits(t, got, sz.Width, sz.Height-5)
			tuitest.Golden(t, sz.Name, got)
		})
	}
}

func TestStates(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    *model.Wakeups
	}{
		{"collecting", nil},
		{"unavailable", &model.Wakeups{Unavailable: "wake-ups unavailable: needs root, or CAP_BPF and CAP_PERFMON (sudo ctxtop, or setcap cap_bpf,cap_perfmon+ep on the binary)"}},
		{"dropped", func() *model.Wakeups { w := tuitest.Wakeups(); w.Dropped = 12_345; return w }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(theme.New(false, true), keys.New())
			m.SetSize(80, 8)
			m.SetWakeups(tc.w)
			got := tuitest.Render(t, m.View(), colorprofile.Ascii)
			tuitest.CheckFits(t, got, 80, 8)
			tuitest.Golden(t, tc.name, got)
		})
	}
}

func press(m Model, keys ...string) (Model, tea.Cmd) {
	var cmd tea.Cmd
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "down":
			msg = tea.KeyPressMsg{Code: tea.KeyDown}
		case "backspace":
			msg = tea.KeyPressMsg{Code: tea.KeyBackspace}
		default:
			r := []rune(k)[0]
			msg = tea.KeyPressMsg{Code: r, Text: k}
		}
		if !m.Handles(msg) {
			continue
		}
		m, cmd = m.Update(msg)
	}
	return m, cmd
}

func tids(rows []model.WakeupPair) [][2]int {
	var out [][2]int
	for _, r := range rows {
		out = append(out, [2]int{r.WakerTID, r.WakeeTID})
	}
	return out
}

func TestFilterSortAndOpen(t *testing.T) {
	m := newModel(80, 20)
	m, _ = press(m, "/", "p", "o", "o", "l")
	if !m.Filtering() {
		t.Fatal("typing a filter: Filtering() = false")
	}
	m, _ = press(m, "enter")
	if diff := cmp.Diff([][2]int{{911, 912}, {912, 911}, {model.WakerTimer, 912}, {0, 913}}, tids(m.Rows())); diff != "" {
		t.Errorf("filter pool (-want +got):\n%s", diff)
	}
	// Sort by cross-CPU share: the column right of WAKE/s.
	m, _ = press(m, ">")
	if c, _ := m.Sort(); c != ColCross {
		t.Errorf("sort column %v, want ColCross", c)
	}
	if diff := cmp.Diff([][2]int{{911, 912}, {912, 911}, {model.WakerTimer, 912}, {0, 913}}, tids(m.Rows())); diff != "" {
		t.Errorf("sorted by XCPU%% (-want +got):\n%s", diff)
	}
	m, _ = press(m, "r")
	if diff := cmp.Diff([][2]int{{model.WakerTimer, 912}, {0, 913}, {912, 911}, {911, 912}}, tids(m.Rows())); diff != "" {
		t.Errorf("reversed (-want +got):\n%s", diff)
	}
	// Enter on the third row opens its wakee.
	m, cmd := press(m, "down", "down", "enter")
	if cmd == nil {
		t.Fatal("Enter gave no command")
	}
	if diff := cmp.Diff(OpenMsg{PID: 901, TID: 911, Comm: "pool-1-thread-1"}, cmd()); diff != "" {
		t.Errorf("Enter (-want +got):\n%s", diff)
	}
	// Esc clears the filter; the cursor stays on the same pair.
	m, _ = press(m, "esc")
	if m.Filter() != "" || len(m.Rows()) != 7 {
		t.Errorf("after Esc: filter %q, %d rows", m.Filter(), len(m.Rows()))
	}
	if p, _ := m.Selected(); p.WakeeTID != 911 {
		t.Errorf("selection moved to %+v", p)
	}
	// The filter matches a PID too.
	m, _ = press(m, "/", "7", "7", "7", "enter")
	if diff := cmp.Diff([][2]int{{777, 1}}, tids(m.Rows())); diff != "" {
		t.Errorf("filter 777 (-want +got):\n%s", diff)
	}
	if got := m.View(); !strings.Contains(got, "/777 1 shown") {
		t.Errorf("status does not show the filter:\n%s", got)
	}
	// An interrupt is found by its name.
	m, _ = press(m, "esc", "/", "t", "i", "m", "e", "r", "enter")
	if diff := cmp.Diff([][2]int{{model.WakerTimer, 912}}, tids(m.Rows())); diff != "" {
		t.Errorf("filter timer (-want +got):\n%s", diff)
	}
}

// TestFilterMatchesIDsFromTheStart: as in the thread table, a number
// matches the PIDs and TIDs it starts, not ones it sits inside.
func TestFilterMatchesIDsFromTheStart(t *testing.T) {
	m := newModel(120, 20)
	m, _ = press(m, "/", "4", "2", "4", "enter")
	if diff := cmp.Diff([][2]int{{4243, 4244}, {4244, 4243}}, tids(m.Rows())); diff != "" {
		t.Errorf("filter 424 (-want +got):\n%s", diff)
	}
	m, _ = press(m, "esc", "/", "2", "4", "3", "enter")
	if len(m.Rows()) != 0 {
		t.Errorf("filter 243 (inside 4243) kept %v", tids(m.Rows()))
	}
}

// TestSortSkipsHiddenColumns: at 80 columns the PID columns are hidden,
// and the sort key never lands on them.
func TestSortSkipsHiddenColumns(t *testing.T) {
	m := newModel(80, 20)
	cols, _ := m.layout()
	for i := range 2 * numColumns {
		m, _ = press(m, "<")
		if c, _ := m.Sort(); !slices.Contains(cols, c) {
			t.Fatalf("after %d presses of <: sorted by hidden column %v (shown %v)", i+1, c, cols)
		}
	}
	if slices.Contains(cols, ColWakerPID) {
		t.Fatalf("80 columns show the waker PID; the test needs a hidden column")
	}
}

// The view's columns are fields.Wakeup's, in its order: the constants
// index it, and every column has a place on screen.
func TestColumnsAreTheWakeupTable(t *testing.T) {
	if len(fields.Wakeup) != int(numColumns) {
		t.Fatalf("fields.Wakeup has %d columns, the view %d", len(fields.Wakeup), numColumns)
	}
	for c, id := range map[Column]fields.ID{
		ColWakerPID: fields.WakerPID, ColWaker: fields.WakerComm, ColWakee: fields.WakeeComm,
		ColRate: fields.WakeupRate, ColCross: fields.CrossCPU, ColP99: fields.LatencyP99,
	} {
		if got := spec(c).ID; got != id {
			t.Errorf("column %d is field %d, want %d", c, got, id)
		}
	}
	for c := range numColumns {
		if f := spec(c); f.Title == "" || f.Width <= 0 {
			t.Errorf("column %d: title %q, width %d", c, f.Title, f.Width)
		}
	}
}
