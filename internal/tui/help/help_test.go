package help

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/ctxtop/ctxtop/internal/tui/keys"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

func TestView(t *testing.T) {
	for _, sz := range tuitest.Sizes {
		t.Run(sz.Name, func(t *testing.T) {
			m := New(theme.New(false, true), keys.New())
			m.SetSize(sz.Width, sz.Height-2)
			got := tuitest.Render(t, m.View(), colorprofile.Ascii)
			tuitest.CheckFits(t, got, sz.Width, sz.Height-2)
			tuitest.Golden(t, sz.Name, got)
		})
	}
}

func TestEveryBindingListedWhenRoomy(t *testing.T) {
	km := keys.New()
	m := New(theme.New(true, true), km)
	m.SetSize(120, 40)
	got := m.View()
	for _, g := range km.FullHelp() {
		for _, b := range g {
			if !strings.Contains(got, b.Help().Desc) {
				t.Errorf("help lacks %q", b.Help().Desc)
			}
		}
	}
}

// At 80x24 the help body is 19 lines (the header takes 4, the footer 1):
// every key, the load panel's m and s and Ctrl-C among them, and the column
// legend must fit there.
func TestEveryKeyAndLegendFit80x24(t *testing.T) {
	km := keys.New()
	m := New(theme.New(true, true), km)
	m.SetSize(80, 19)
	got := tuitest.Render(t, m.View(), colorprofile.NoTTY)
	tuitest.CheckFits(t, got, 80, 19)
	for _, g := range km.FullHelp() {
		for _, b := range g {
			if h := b.Help(); !strings.Contains(got, h.Key+" ") || !strings.Contains(got, h.Desc) {
				t.Errorf("help at 80x24 lacks %q %q:\n%s", h.Key, h.Desc, got)
			}
		}
	}
	for _, want := range []string{"^C", "load: next mode", "load: start/stop",
		"CSW/s", "NVCSW/s", "TOTAL/s", "%CPU", "WAIT%", "CPUS", "WHY", "THR", "(no thread row)", "log scale"} {
		if !strings.Contains(got, want) {
			t.Errorf("help at 80x24 lacks %q:\n%s", want, got)
		}
	}
}

// TestSmallScreenPages: at 40x10 most of the help is below the fold. The
// last line says so and how to reach it; ↓ pages on until the legend's
// last line shows, and nothing is then said to be below.
func TestSmallScreenPages(t *testing.T) {
	km := keys.New()
	m := New(theme.New(true, true), km)
	m.SetSize(40, 8)
	first := ansi.Strip(m.View())
	lines := strings.Split(first, "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "more") || !strings.Contains(last, "↓") {
		t.Fatalf("help cut at 40x10 does not say there is more:\n%s", first)
	}
	// The legend's last words, wrapped at 40 columns.
	end := "--hot."
	var screen string
	for range 100 {
		m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
		screen = ansi.Strip(m.View())
		tuitest.CheckFits(t, screen, 40, 8)
		if strings.Contains(screen, end) {
			break
		}
	}
	if !strings.Contains(screen, end) {
		t.Fatalf("↓ never reaches the legend's end:\n%s", screen)
	}
	if strings.Contains(screen, "more") {
		t.Errorf("at the end, still a line says there is more:\n%s", screen)
	}
	m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyHome})
	if got := ansi.Strip(m.View()); got != first {
		t.Errorf("Home should show the top again:\n%s", got)
	}
	// Roomy: no hint, nothing to scroll.
	m.SetSize(120, 40)
	before := m.View()
	m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	if got := m.View(); got != before || strings.Contains(ansi.Strip(got), "more") {
		t.Errorf("at 120x40 everything fits; ↓ changed the screen or a hint shows:\n%s", ansi.Strip(got))
	}
}
