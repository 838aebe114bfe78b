package header

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"

	"github.com/ctxtop/ctxtop/internal/tui/theme"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

func TestView(t *testing.T) {
	for _, sz := range tuitest.Sizes {
		t.Run(sz.Name, func(t *testing.T) {
			m := New(theme.New(false, true), "db-7", "6.18.0-ctx", "v1.0.0")
			m.SetSize(sz.Width, sz.Height)
			m.SetState(time.Second, false, "")
			for _, s := range tuitest.History(30) {
				m.SetSnapshot(&s)
			}
			got := tuitest.Render(t, m.View(), colorprofile.Ascii)
			tuitest.CheckFits(t, got, sz.Width, m.Height())
			tuitest.Golden(t, sz.Name, got)
		})
	}
}

func TestViewWithoutPSIOrSpike(t *testing.T) {
	m := New(theme.New(true, true), "db-7", "6.18.0-ctx", "v1.0.0")
	m.SetSize(120, 40)
	m.SetState(2*time.Second, true, "processes")
	s := tuitest.Snapshot()
	s.System.HasPSI = false
	s.Spike.Active = false
	m.SetSnapshot(&s)
	got := tuitest.Render(t, m.View(), colorprofile.Ascii)
	for _, want := range []string{"PAUSED", "every 2s", "processes", "402,118"} {
		if !strings.Contains(got, want) {
			t.Errorf("header lacks %q:\n%s", want, got)
		}
	}
	for _, absent := range []string{"psi", "SPIKE"} {
		if strings.Contains(got, absent) {
			t.Errorf("header shows %q with HasPSI and Spike off:\n%s", absent, got)
		}
	}
}

func TestSpikeMarkedAtEverySize(t *testing.T) {
	for _, sz := range tuitest.Sizes {
		m := New(theme.New(true, true), "h", "k", "v")
		m.SetSize(sz.Width, sz.Height)
		s := tuitest.Snapshot()
		m.SetSnapshot(&s)
		if got := m.View(); !strings.Contains(got, "SPIKE") {
			t.Errorf("%s: spike not marked:\n%s", sz.Name, got)
		}
	}
}
