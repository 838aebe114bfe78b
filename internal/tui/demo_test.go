package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/loadpanel"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// demoRun is a workload of the tour in a child process 5000, its two
// threads 5001 and 5002, with a cost per mode like a 2-CPU guest's.
type demoRun struct {
	ns   float64
	done chan struct{}
}

func (r *demoRun) Progress() LoadProgress {
	return LoadProgress{Elapsed: 4 * time.Second, RoundTrips: 800_000, NsPerRoundTrip: r.ns, TIDs: []int{5001, 5002}, ChildPID: 5000}
}
func (r *demoRun) Stop() LoadSummary     { return LoadSummary{NsPerRoundTrip: r.ns, NsPerSwitch: r.ns / 2} }
func (r *demoRun) Done() <-chan struct{} { return r.done }

type demoLoader struct{}

func (demoLoader) Modes() []LoadMode {
	return []LoadMode{{Name: "goroutine", MaxCPUs: 2}, {Name: "futex", MaxCPUs: 2}, {Name: "pipe", MaxCPUs: 2}, {Name: "process", MaxCPUs: 2}}
}
func (demoLoader) AllowedCPUs() []int { return []int{0, 1} }
func (demoLoader) Start(mode string, cpus []int) (LoadRun, error) {
	ns := map[string]float64{"futex": 10_081, "process": 25_303, "pool": 1_870, "goroutine": 412}[strings.Fields(mode)[0]]
	if len(cpus) == 1 {
		ns /= 2
	}
	if strings.Contains(mode, "working-set") {
		ns = 311_939
	}
	return &demoRun{ns: ns, done: make(chan struct{})}, nil
}

// demoScreen is the screen at one point of the tour.
type demoScreen struct {
	name, screen string
	// caption is the step's caption as the panel was given it.
	caption string
}

// tourScreens walks the whole demo at w x h over a host switching cs
// times a second on 2 CPUs, with the tracer's wake-up line shown while a
// workload runs (the tallest panel): the screen at each step after a
// sample, and at the end.
func tourScreens(t *testing.T, w, h int, cs float64) []demoScreen {
	t.Helper()
	snap := tuitest.Snapshot()
	snap.Threads = append([]model.ThreadRates{
		{PID: 5000, TID: 5001, Comm: "ping-futex", VoluntaryPerSec: 150_211, InvoluntaryPerSec: 20_118, CPUPercent: 45.2, WaitPercent: 21, Hot: true, Why: model.Why{Kind: model.Blocking, HasWait: true, On: []model.WaitShare{{Reason: "futex", Share: 1}}}},
		{PID: 5000, TID: 5002, Comm: "pong-futex", VoluntaryPerSec: 150_190, InvoluntaryPerSec: 20_121, CPUPercent: 44.9, WaitPercent: 22, Hot: true, Why: model.Why{Kind: model.Blocking, HasWait: true, On: []model.WaitShare{{Reason: "futex", Share: 1}}}},
	}, snap.Threads...)
	snap.System.ContextSwitchesPerSec, snap.System.CPUs = cs, 2
	snap.Spike = model.Spike{}
	m := New(Options{Source: &fakeSource{snaps: []model.Snapshot{snap}}, Interval: time.Second, HotThreshold: 1000, NoColor: true,
		FixedBackground: true, Version: "test", Load: demoLoader{}, Demo: true, DemoStep: 10 * time.Second}, "db-7", "6.18.0").handleResize(w, h)
	// A fixed clock: the countdown reads 10s on every screen.
	start := time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)
	m.demo.now = func() time.Time { return start }
	m.demo.init()
	var out []demoScreen
	for i := range len(demoSteps) + 1 {
		m = sampled(t, m)
		if m.load.running() {
			m.load.wake = &loadpanel.Wake{WakeFigures: model.WakeFigures{PerSec: 196_810, CrossCPUPercent: 48.2, LatencyP50Micros: 6.1, LatencyP99Micros: 31}, ReschedIPIsPerSec: 94_100}
		}
		name := fmt.Sprintf("%dx%d-step%d", w, h, i+1)
		if i == len(demoSteps) {
			name = fmt.Sprintf("%dx%d-finished", w, h)
		}
		screen := m.Render()
		tuitest.CheckFits(t, screen, w, h)
		out = append(out, demoScreen{name: name, screen: screen, caption: m.demoView().Caption})
		m, _ = step(t, m, press("n"))
	}
	return out
}

// words is s with its runs of spaces and line breaks made one space, so a
// wrapped caption can be found whole.
func words(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestDemoFits80x24: at 80x24, the size of a projector's terminal, every
// step's caption shows whole and the end shows every step's result row. A
// baseline far above an idle host's rate says the host is busy, on every
// screen after it, instead of calling it idle.
func TestDemoFits80x24(t *testing.T) {
	screens := tourScreens(t, 80, 24, 382_000)
	for _, s := range screens {
		got := words(ansi.Strip(s.screen))
		if !strings.Contains(got, words(s.caption)) {
			t.Errorf("%s: the caption %q is cut:\n%s", s.name, s.caption, ansi.Strip(s.screen))
		}
		if !strings.Contains(got, "The host is busy:") || strings.Contains(got, "idle baseline") {
			t.Errorf("%s: a 382,000 cs/s baseline on 2 CPUs is not called busy:\n%s", s.name, ansi.Strip(s.screen))
		}
	}
	if first := words(ansi.Strip(screens[0].screen)); !strings.Contains(first, "382,000 cs/s with nothing of ours running, 191,000 per CPU") {
		t.Errorf("the baseline step does not say how busy the host is:\n%s", ansi.Strip(screens[0].screen))
	}
	end := ansi.Strip(screens[len(screens)-1].screen)
	for i, st := range demoSteps {
		title := st.title
		if i == 0 {
			title = "baseline, host busy"
		}
		if !strings.Contains(end, title+" ") {
			t.Errorf("the end lacks the row of %q:\n%s", title, end)
		}
	}
	if !strings.Contains(end, "N run the last step again") {
		t.Errorf("the end lacks its keys:\n%s", end)
	}
	for _, s := range screens {
		tuitest.Golden(t, s.name, tuitest.Render(t, s.screen, colorprofile.Ascii))
	}
}

// TestDemoIdleHostIsNotBusy: 1,500 cs/s on 2 CPUs is an idle host; no
// warning, and the baseline row keeps its name.
func TestDemoIdleHostIsNotBusy(t *testing.T) {
	screens := tourScreens(t, 80, 24, 1_500)
	for _, s := range screens {
		if got := ansi.Strip(s.screen); strings.Contains(got, "busy") {
			t.Errorf("%s: an idle host called busy:\n%s", s.name, got)
		}
	}
	if end := ansi.Strip(screens[len(screens)-1].screen); !strings.Contains(end, "idle baseline ") {
		t.Errorf("the end lacks the idle baseline row:\n%s", end)
	}
}

// TestDemoSmallScreens: smaller terminals keep the step and as much of
// the rest as fits, never more lines or columns than there are.
func TestDemoSmallScreens(t *testing.T) {
	for _, sz := range [][2]int{{40, 10}, {60, 16}, {80, 20}} {
		for _, s := range tourScreens(t, sz[0], sz[1], 382_000) {
			if got := ansi.Strip(s.screen); !strings.Contains(got, "DEMO ") {
				t.Errorf("%s: the step line is gone:\n%s", s.name, got)
			}
		}
	}
	for _, s := range tourScreens(t, 40, 10, 382_000) {
		tuitest.Golden(t, s.name, tuitest.Render(t, s.screen, colorprofile.Ascii))
	}
}
