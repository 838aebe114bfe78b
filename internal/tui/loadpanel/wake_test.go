package loadpanel

import (
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

func TestViewWake(t *testing.T) {
	pinned := &Wake{WakeFigures: model.WakeFigures{PerSec: 196_810, CrossCPUPercent: 0.1, LatencyP50Micros: 1.6, LatencyP99Micros: 3.4}, ReschedIPIsPerSec: 14}
	twoCPUs := &Wake{WakeFigures: model.WakeFigures{PerSec: 33_100, CrossCPUPercent: 100, LatencyP50Micros: 24.1, LatencyP99Micros: 61}, ReschedIPIsPerSec: 33_420}
	demo := &Demo{Step: 3, Steps: 6, Title: "futex, two CPUs", Caption: "One thread on each CPU.", Remaining: "7s", SystemCS: 66_020}
	for _, sz := range tuitest.Sizes {
		for _, c := range []struct {
			name string
			wake *Wake
			demo *Demo
		}{{"pinned", pinned, nil}, {"demo-two-cpus", twoCPUs, demo}} {
			t.Run(sz.Name+"-"+c.name, func(t *testing.T) {
				m := New(theme.New(false, true))
				m.SetSize(sz.Width, sz.Height-6)
				m.SetState(State{Mode: "futex", Pinning: "both on CPU 0", Running: true, Elapsed: "4.2s", NsPerRoundTrip: 5412, RoundTrips: 776_001, LoadSwitches: 369_550, Wake: c.wake}, c.demo)
				got := tuitest.Render(t, m.View(), colorprofile.Ascii)
				tuitest.CheckFits(t, got, sz.Width, sz.Height-6)
				tuitest.Golden(t, sz.Name+"-"+c.name, got)
			})
		}
	}
}

func TestWakeNoteAndStopped(t *testing.T) {
	m := New(theme.New(true, true))
	m.SetSize(120, 10)
	m.SetState(State{Mode: "futex", Running: true, NsPerRoundTrip: 5000, Wake: &Wake{Note: "wake-ups unavailable: needs root"}}, nil)
	if got := ansi.Strip(m.View()); !strings.Contains(got, "wake-ups unavailable: needs root") {
		t.Errorf("want the reason:\n%s", got)
	}
	m.SetState(State{Mode: "futex", Wake: &Wake{WakeFigures: model.WakeFigures{PerSec: 1, CrossCPUPercent: 100}}}, nil)
	if got := ansi.Strip(m.View()); strings.Contains(got, "cross-CPU") {
		t.Errorf("a stopped load shows wake-ups:\n%s", got)
	}
}
