package header

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
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

// gopsutil's facts fill the first line as the width allows, the CPU model
// giving way first.
func TestHostFacts(t *testing.T) {
	s := tuitest.Snapshot()
	f := hostinfo.Facts{Hostname: "db-7", Kernel: "6.18.0-ctx", CPUModel: "AMD EPYC 7B13", CPUs: 2,
		BootTime: s.Time.Add(-(26*time.Hour + 5*time.Minute)), MemTotal: 8 << 30}
	for _, c := range []struct {
		width      int
		want, lack []string
	}{
		{140, []string{"db-7", "6.18.0-ctx", "2 × AMD EPYC 7B13", "8.0 GiB", "up 1d 2h", "every 1s", "15:09:26"}, nil},
		{80, []string{"db-7", "6.18.0-ctx", "2 CPUs", "8.0 GiB", "up 1d 2h", "every 1s", "15:09:26"}, []string{"EPYC"}},
	} {
		m := New(theme.New(true, true), "h", "k", "v1")
		m.SetFacts(f)
		m.SetSize(c.width, 24)
		m.SetState(time.Second, false, "")
		m.SetSnapshot(&s)
		first := strings.Split(tuitest.Render(t, m.View(), colorprofile.NoTTY), "\n")[0]
		for _, w := range c.want {
			if !strings.Contains(first, w) {
				t.Errorf("width %d: first line %q lacks %q", c.width, first, w)
			}
		}
		for _, w := range c.lack {
			if strings.Contains(first, w) {
				t.Errorf("width %d: first line %q should have dropped %q", c.width, first, w)
			}
		}
	}
}

// An interval without host rates (a counter stepped back, /proc/stat
// unreadable) shows "-" and the reason at every size, never a quiet 0, and
// leaves a gap in the sparklines.
func TestViewWithoutRates(t *testing.T) {
	for _, sz := range tuitest.Sizes {
		t.Run(sz.Name, func(t *testing.T) {
			m := New(theme.New(false, true), "db-7", "6.18.0-ctx", "v1.0.0")
			m.SetSize(sz.Width, sz.Height)
			m.SetState(time.Second, false, "")
			for _, s := range tuitest.History(30) {
				m.SetSnapshot(&s)
			}
			s := tuitest.Snapshot()
			s.Spike = model.Spike{}
			s.System.ContextSwitchesPerSec, s.System.InterruptsPerSec, s.System.ReschedIPIsPerSec = 0, 0, 0
			s.System.PerCPU = nil
			s.System.NoRates = model.NoRatesStepBack
			m.SetSnapshot(&s)
			got := tuitest.Render(t, m.View(), colorprofile.Ascii)
			tuitest.CheckFits(t, got, sz.Width, m.Height())
			tuitest.Golden(t, sz.Name, got)
			plain := tuitest.Render(t, m.View(), colorprofile.NoTTY)
			if !strings.Contains(plain, "no rates: a host") {
				t.Errorf("the header does not say why there are no rates:\n%s", plain)
			}
			for _, l := range strings.Split(plain, "\n") {
				if f := strings.Fields(l); len(f) > 1 && (f[0] == "cs/s" || f[0] == "in/s") && f[1] != "-" {
					t.Errorf("%s shows %q for an interval without rates, want -:\n%s", f[0], f[1], plain)
				}
			}
			if h := m.History(); !math.IsNaN(h[len(h)-1]) {
				t.Errorf("the cs/s history ends in %v, want NaN (a gap)", h[len(h)-1])
			}
		})
	}
}
