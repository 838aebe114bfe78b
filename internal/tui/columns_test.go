package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/settings"
	"github.com/ctxtop/ctxtop/internal/tui/table"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// tableHead is the rendered screen's column title line.
func tableHead(t *testing.T, m Model) string {
	t.Helper()
	for _, l := range strings.Split(ansi.Strip(m.Render()), "\n") {
		if strings.Contains(l, "TOTAL/s") && strings.Contains(l, "COMM") {
			return l
		}
	}
	t.Fatalf("no column titles on screen:\n%s", ansi.Strip(m.Render()))
	return ""
}

// The panel at 80x24 and 40x10, on the thread rows, with %CPU hidden and
// the columns that have no room said so: a golden each.
func TestColumnsPanel(t *testing.T) {
	for _, sz := range []tuitest.Size{{Name: "80x24", Width: 80, Height: 24}, {Name: "40x10", Width: 40, Height: 10}} {
		t.Run(sz.Name, func(t *testing.T) {
			m := sampled(t, newRoot(t, &fakeSource{}, sz.Width, sz.Height))
			m, _ = step(t, m, fkey(2))
			if m.view != viewColumns {
				t.Fatalf("F2: view %v, want the columns panel", m.view)
			}
			// Down to %CPU: PID TID COMM CONTAINER POD CSW/s NVCSW/s TOTAL/s %CPU.
			for range 8 {
				m, _ = step(t, m, press("down"))
			}
			m, _ = step(t, m, press("space"))
			got := tuitest.Render(t, m.Render(), colorprofile.Ascii)
			tuitest.CheckFits(t, got, sz.Width, sz.Height)
			tuitest.Golden(t, sz.Name, got)
		})
	}
}

// Space hides the column under the cursor and shows it again; an
// identity column stays; Esc goes back to the table, which lacks it.
func TestColumnsPanelKeys(t *testing.T) {
	m := sampled(t, newRoot(t, &fakeSource{}, 120, 30))
	m, _ = step(t, m, press("C"))
	m, _ = step(t, m, press("space")) // PID: locked in the thread view
	for range 5 {
		m, _ = step(t, m, press("down"))
	}
	m, _ = step(t, m, press("space")) // CSW/s
	screen := ansi.Strip(m.Render())
	if !strings.Contains(screen, "[ ] CSW/s") || !strings.Contains(screen, "[x] PID") {
		t.Errorf("the panel after hiding CSW/s:\n%s", screen)
	}
	m, _ = step(t, m, press("esc"))
	if m.view != viewTable {
		t.Fatalf("Esc: view %v, want the table", m.view)
	}
	head := tableHead(t, m)
	if strings.Contains(head, " CSW/s") || !strings.Contains(head, "PID") || !strings.Contains(head, "NVCSW/s") {
		t.Errorf("the table after hiding CSW/s: %q", head)
	}
	if diff := cmp.Diff(map[string][]string{"threads": {"CSW/s"}}, m.Settings().Hidden); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	// q closes the panel, it does not quit; the keys left in it do
	// nothing to the table behind.
	m, _ = step(t, m, fkey(2))
	m, _ = step(t, m, press("g"))
	m, cmds := step(t, m, press("q"))
	if m.view != viewTable || m.table.Grouped() || len(cmds) != 0 {
		t.Errorf("q in the panel: view %v, grouped %v, messages %v", m.view, m.table.Grouped(), cmds)
	}
	m, _ = step(t, m, press("C"))
	m, _ = step(t, m, press("space")) // the cursor starts on top again: PID
	m, _ = step(t, m, press("enter"))
	if !strings.Contains(tableHead(t, m), "PID") {
		t.Errorf("PID hidden: %q", tableHead(t, m))
	}
}

// The hidden columns are restored per row kind from the settings, and a
// title this version does not know is ignored.
func TestColumnsRestoredFromSettings(t *testing.T) {
	saved := settings.Settings{Hidden: map[string][]string{
		"threads": {"WHY", "GONE/s"}, "processes": {"THR"}, "sockets": {"X"}}}
	m := actionRoot(t, nil, Options{Settings: saved})
	if h := tableHead(t, m); strings.Contains(h, "WHY") {
		t.Errorf("WHY restored hidden, but shows: %q", h)
	}
	want := map[string][]string{"threads": {"WHY"}, "processes": {"THR"}}
	if diff := cmp.Diff(want, m.Settings().Hidden); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	m, _ = step(t, m, press("H"))
	if h := tableHead(t, m); strings.Contains(h, "THR") || !strings.Contains(h, "WHY") {
		t.Errorf("processes: %q, want WHY and no THR", h)
	}
}

// Choosing columns is a view choice: a replay has it.
func TestColumnsPanelInAReplay(t *testing.T) {
	m, _ := replayRoot(t, 120, 30)
	m, _ = step(t, m, fkey(2))
	if m.view != viewColumns {
		t.Fatalf("F2 in a replay: view %v, want the columns panel", m.view)
	}
	playing := m.replay.ctl.Playing()
	m, _ = step(t, m, press("down"))
	m, _ = step(t, m, press("down"))
	m, _ = step(t, m, press("space")) // COMM: locked
	for range 3 {
		m, _ = step(t, m, press("down"))
	}
	m, _ = step(t, m, press("space")) // CSW/s, not play/pause
	if m.replay.ctl.Playing() != playing {
		t.Error("space in the panel played or paused the replay")
	}
	m, _ = step(t, m, press("esc"))
	if h := tableHead(t, m); strings.Contains(h, " CSW/s") {
		t.Errorf("CSW/s hidden in a replay but shows: %q", h)
	}
	if got := m.table.Hidden(table.ModeThreads); len(got) != 1 || got[0] != "CSW/s" {
		t.Errorf("hidden %v, want [CSW/s]", got)
	}
}
