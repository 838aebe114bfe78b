package help

import (
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"

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
