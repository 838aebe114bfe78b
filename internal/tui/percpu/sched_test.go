package percpu

import (
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

func TestViewWithSched(t *testing.T) {
	s := tuitest.Snapshot()
	for _, sz := range tuitest.Sizes {
		t.Run(sz.Name, func(t *testing.T) {
			m := New(theme.New(false, true))
			m.SetSize(sz.Width, sz.Height-5)
			m.SetSnapshot(&s)
			m.SetSched(tuitest.Wakeups())
			got := tuitest.Render(t, m.View(), colorprofile.Ascii)
			tuitest.CheckFits(t, got, sz.Width, sz.Height-5)
			tuitest.Golden(t, sz.Name, got)
		})
	}
}

func TestSchedUnavailableSaysWhy(t *testing.T) {
	s := tuitest.Snapshot()
	m := New(theme.New(true, true))
	m.SetSize(120, 10)
	m.SetSnapshot(&s)
	m.SetSched(&model.Wakeups{Unavailable: "wake-ups unavailable: needs root"})
	got := m.View()
	if !strings.Contains(got, "cs/s and migrations/s per CPU: wake-ups unavailable: needs root") || strings.Contains(got, "migr/s") {
		t.Errorf("want the reason and no columns:\n%s", got)
	}
}
