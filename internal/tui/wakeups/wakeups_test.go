package wakeups

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/keys"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// fixture is a pinned ping-pong pair, a cross-CPU pair with a slow tail,
// interrupt wake-ups of a pool thread, and a name too long for its column.
func fixture() *model.Wakeups {
	return &model.Wakeups{
		Interval: time.Second,
		Pairs: []model.WakeupPair{
			{WakerPID: 4242, WakerTID: 4243, WakerComm: "pp-ping", WakeePID: 4242, WakeeTID: 4244, WakeeComm: "pp-pong", PerSec: 98_412, CrossCPUPercent: 0, LatencyP50Micros: 1.6, LatencyP99Micros: 3.4},
			{WakerPID: 4242, WakerTID: 4244, WakerComm: "pp-pong", WakeePID: 4242, WakeeTID: 4243, WakeeComm: "pp-ping", PerSec: 98_398, CrossCPUPercent: 0.2, LatencyP50Micros: 1.5, LatencyP99Micros: 3.1},
			{WakerPID: 901, WakerTID: 911, WakerComm: "pool-1-thread-1", WakeePID: 901, WakeeTID: 912, WakeeComm: "pool-1-thread-2", PerSec: 2_310, CrossCPUPercent: 99.1, LatencyP50Micros: 24.5, LatencyP99Micros: 1_480},
			{WakerPID: 0, WakerTID: 0, WakerComm: "swapper/1", WakeePID: 901, WakeeTID: 913, WakeeComm: "pool-1-thread-3", PerSec: 210, CrossCPUPercent: 0, LatencyP50Micros: 8.2, LatencyP99Micros: 40},
			{WakerPID: 777, WakerTID: 777, WakerComm: "a-process-with-", WakeePID: 1, WakeeTID: 1, WakeeComm: "systemd", PerSec: 1.5, CrossCPUPercent: 100, LatencyP50Micros: 12, LatencyP99Micros: 12},
		},
		Dropped: 0,
	}
}

func newModel(w, h int) Model {
	m := New(theme.New(false, true), keys.New())
	m.SetSize(w, h)
	m.SetWakeups(fixture())
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
		{"dropped", func() *model.Wakeups { w := fixture(); w.Dropped = 12_345; return w }()},
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
	if diff := cmp.Diff([][2]int{{911, 912}, {0, 913}}, tids(m.Rows())); diff != "" {
		t.Errorf("filter pool (-want +got):\n%s", diff)
	}
	// Sort by cross-CPU share: the column right of WAKE/s.
	m, _ = press(m, ">")
	if c, _ := m.Sort(); c != ColCross {
		t.Errorf("sort column %v, want ColCross", c)
	}
	if diff := cmp.Diff([][2]int{{911, 912}, {0, 913}}, tids(m.Rows())); diff != "" {
		t.Errorf("sorted by XCPU%% (-want +got):\n%s", diff)
	}
	m, _ = press(m, "r")
	if diff := cmp.Diff([][2]int{{0, 913}, {911, 912}}, tids(m.Rows())); diff != "" {
		t.Errorf("reversed (-want +got):\n%s", diff)
	}
	// Enter on the second row opens its wakee.
	m, cmd := press(m, "down", "enter")
	if cmd == nil {
		t.Fatal("Enter gave no command")
	}
	if diff := cmp.Diff(OpenMsg{PID: 901, TID: 912}, cmd()); diff != "" {
		t.Errorf("Enter (-want +got):\n%s", diff)
	}
	// Esc clears the filter; the cursor stays on the same pair.
	m, _ = press(m, "esc")
	if m.Filter() != "" || len(m.Rows()) != 5 {
		t.Errorf("after Esc: filter %q, %d rows", m.Filter(), len(m.Rows()))
	}
	if p, _ := m.Selected(); p.WakeeTID != 912 {
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
}
