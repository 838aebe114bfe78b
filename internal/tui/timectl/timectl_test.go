package timectl

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/tui/theme"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// timeline is 100 samples a second apart; the first has no rate, and the
// model marked spikes at 30-34 and 70-72.
func timeline() []Point {
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	pts := make([]Point, 100)
	for i := range pts {
		pts[i] = Point{Time: start.Add(time.Duration(i) * time.Second), Rate: i > 0,
			Spike: (i >= 30 && i <= 34) || (i >= 70 && i <= 72)}
	}
	return pts
}

func press(s string) tea.KeyPressMsg {
	switch s {
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	}
	return tea.KeyPressMsg{Code: []rune(s)[0], Text: s}
}

func TestKeysMoveThePosition(t *testing.T) {
	m := New(theme.New(true, true), timeline(), time.Second)
	if diff := cmp.Diff(1, m.Pos()); diff != "" {
		t.Errorf("start (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		key     string
		pos     int
		playing bool
		msg     string
	}{
		{"]", 30, false, ""},
		{"]", 70, false, ""},
		{"]", 70, false, "no later spike"},
		{"[", 30, false, ""},
		{"[", 30, false, "no earlier spike"},
		{"right", 31, false, ""},
		{"right", 32, false, ""},
		// Inside a storm, [ goes back to where it began, ] past its end.
		{"[", 30, false, ""},
		{"right", 31, false, ""},
		{"]", 70, false, ""},
		{"[", 30, false, ""},
		{"right", 31, false, ""},
		{"left", 30, false, ""},
		{"}", 90, false, ""},
		{"}", 99, false, ""},
		{"{", 39, false, ""},
		{"{", 1, false, ""},
		{"left", 1, false, ""},
		{"space", 1, true, ""},
		{"space", 1, false, ""},
	} {
		m, _ = m.Update(press(tc.key))
		got := struct {
			Pos     int
			Playing bool
			Msg     string
		}{m.Pos(), m.Playing(), m.msg}
		want := struct {
			Pos     int
			Playing bool
			Msg     string
		}{tc.pos, tc.playing, tc.msg}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("after %q (-want +got):\n%s", tc.key, diff)
		}
	}
}

func TestTableKeysAreNotTimeKeys(t *testing.T) {
	m := New(theme.New(true, true), timeline(), time.Second)
	for _, k := range []string{"down", "j", "k", "q", "/", "<", ">", "H", "g", "c"} {
		if m.Handles(press(k)) {
			t.Errorf("%q is taken by the time control; the table needs it", k)
		}
	}
	for _, k := range []string{"space", "left", "right", "[", "]", "{", "}", "1", "9", "+", "-"} {
		if !m.Handles(press(k)) {
			t.Errorf("%q is not a time key", k)
		}
	}
}

func TestSpeedAndEnd(t *testing.T) {
	m := New(theme.New(true, true), timeline(), time.Second)
	m, _ = m.Update(press("4"))
	if diff := cmp.Diff(250*time.Millisecond, m.Period()); diff != "" {
		t.Errorf("period at 4× (-want +got):\n%s", diff)
	}
	m, _ = m.Update(press("}"))
	m, _ = m.Update(press("}"))
	m.SetPlaying(true)
	if m.Advance() || m.Playing() {
		t.Errorf("Advance at the end: still playing at %d", m.Pos())
	}
	// Play at the end starts over.
	m, _ = m.Update(press("space"))
	if diff := cmp.Diff(1, m.Pos()); diff != "" {
		t.Errorf("play at the end (-want +got):\n%s", diff)
	}
}

func TestView(t *testing.T) {
	for _, sz := range tuitest.Sizes {
		t.Run(sz.Name, func(t *testing.T) {
			m := New(theme.New(false, true), timeline(), time.Second)
			m.SetSize(sz.Width, 1)
			m, _ = m.Update(press("]"))
			m, _ = m.Update(press("3"))
			got := tuitest.Render(t, m.View(), colorprofile.Ascii)
			tuitest.CheckFits(t, got, sz.Width, 1)
			tuitest.Golden(t, sz.Name, got)
		})
	}
}

// TestHintsNeedTwentyBarCells: the key hints show from the first width
// that leaves the bar 20 cells beside them, counted in cells, not bytes.
func TestHintsNeedTwentyBarCells(t *testing.T) {
	m := New(theme.New(true, true), timeline(), time.Second)
	m, _ = m.Update(press("]"))
	for w := 30; w <= 200; w++ {
		m.SetSize(w, 1)
		got := tuitest.Render(t, m.View(), colorprofile.Ascii)
		tuitest.CheckFits(t, got, w, 1)
		if !strings.Contains(got, "space ←/→") {
			continue
		}
		cells := strings.Count(got, "━") + strings.Count(got, "─") + strings.Count(got, "▲") + strings.Count(got, "●")
		if cells != 20 {
			t.Errorf("at %d columns, the first with hints, the bar has %d cells, want 20:\n%s", w, cells, got)
		}
		return
	}
	t.Error("no width up to 200 shows the hints")
}
