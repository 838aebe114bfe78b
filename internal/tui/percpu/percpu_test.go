package percpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

func TestView(t *testing.T) {
	s := tuitest.Snapshot()
	for _, sz := range tuitest.Sizes {
		t.Run(sz.Name, func(t *testing.T) {
			m := New(theme.New(false, true))
			m.SetSize(sz.Width, sz.Height-5)
			m.SetSnapshot(&s)
			got := tuitest.Render(t, m.View(), colorprofile.Ascii)
			tuitest.CheckFits(t, got, sz.Width, sz.Height-5)
			tuitest.Golden(t, sz.Name, got)
		})
	}
}

func TestManyCPUsAreCut(t *testing.T) {
	s := tuitest.Snapshot()
	s.System.PerCPU = make([]model.CPURates, 64)
	for i := range s.System.PerCPU {
		s.System.PerCPU[i] = model.CPURates{InterruptsPerSec: float64(i * 100), ReschedIPIsPerSec: float64(i)}
	}
	m := New(theme.New(true, true))
	m.SetSize(80, 10)
	m.SetSnapshot(&s)
	got := m.View()
	tuitest.CheckFits(t, got, 80, 10)
	if want := fmt.Sprintf("… %d more CPUs", 64-8); !strings.Contains(got, want) {
		t.Errorf("want %q:\n%s", want, got)
	}
}

// An interval without host rates says why, not "yet": it may come long
// after the first sample.
func TestNoRatesSaysWhy(t *testing.T) {
	s := tuitest.Snapshot()
	s.System.PerCPU, s.System.NoRates = nil, model.NoRatesStepBack
	m := New(theme.New(true, true))
	m.SetSize(80, 10)
	m.SetSnapshot(&s)
	if got, want := m.View(), "no per-CPU rates this interval: "+model.NoRatesStepBack; !strings.Contains(got, want) {
		t.Errorf("want %q:\n%s", want, got)
	}
}
