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
