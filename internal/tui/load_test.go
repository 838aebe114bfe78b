package tui

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

type fakeRun struct {
	cpus    []int
	stopped bool
	done    chan struct{}
}

func (r *fakeRun) Progress() LoadProgress {
	return LoadProgress{Elapsed: 1500 * time.Millisecond, RoundTrips: 1000, NsPerRoundTrip: 5400, TIDs: []int{os.Getpid() + 100000}}
}
func (r *fakeRun) Stop() LoadSummary {
	r.stopped = true
	return LoadSummary{NsPerRoundTrip: 5000, NsPerSwitch: 2500}
}
func (r *fakeRun) Done() <-chan struct{} { return r.done }

type fakeLoader struct{ runs []*fakeRun }

func (f *fakeLoader) Modes() []LoadMode {
	return []LoadMode{{Name: "goroutine", MaxCPUs: 2}, {Name: "futex", MaxCPUs: 2}, {Name: "pipe", MaxCPUs: 2}, {Name: "process", MaxCPUs: 2}}
}
func (f *fakeLoader) AllowedCPUs() []int { return []int{0, 1} }
func (f *fakeLoader) Start(mode string, cpus []int) (LoadRun, error) {
	r := &fakeRun{cpus: cpus, done: make(chan struct{})}
	f.runs = append(f.runs, r)
	return r, nil
}

// loadSnapshot is the fixture plus one load thread inside this process.
func loadSnapshot() model.Snapshot {
	s := tuitest.Snapshot()
	s.Threads = append([]model.ThreadRates{{PID: os.Getpid(), TID: os.Getpid() + 100000, Comm: "ctxtop-load", VoluntaryPerSec: 200000, CPUPercent: 40}}, s.Threads...)
	s.Self = model.SelfRates{CPUPercent: 40.5, SwitchesPerSec: 200004}
	return s
}

func TestLoadPanelStartPinAndStop(t *testing.T) {
	ld := &fakeLoader{}
	src := &fakeSource{snaps: []model.Snapshot{loadSnapshot()}}
	m := New(Options{Source: src, Interval: time.Second, HotThreshold: 1000, NoColor: true, FixedBackground: true, Load: ld}, "h", "k").handleResize(100, 30)
	m, _ = step(t, m, press("L"))
	if !strings.Contains(m.Render(), "LOAD") || !strings.Contains(m.Render(), "futex") {
		t.Fatalf("L should open the panel on futex:\n%s", m.Render())
	}
	m, _ = step(t, m, press("s"))
	if len(ld.runs) != 1 || ld.runs[0].cpus != nil {
		t.Fatalf("s should start one unpinned run, got %d runs", len(ld.runs))
	}
	m = sampled(t, m)
	got := ansi.Strip(m.Render())
	for _, want := range []string{"5,400 ns/round trip", "200,000 cs/s from its threads", "load generator", "self excl. load 0.5% 4 cs/s"} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks %q:\n%s", want, got)
		}
	}
	var pins [][]int
	for range 3 {
		m, _ = step(t, m, press("p"))
		pins = append(pins, ld.runs[len(ld.runs)-1].cpus)
	}
	if diff := cmp.Diff([][]int{{0}, {0, 1}, nil}, pins); diff != "" {
		t.Errorf("p cycles the pinning (-want +got)\n%s", diff)
	}
	for _, r := range ld.runs[:len(ld.runs)-1] {
		if !r.stopped {
			t.Errorf("a replaced run was left running")
		}
	}
	m, _ = step(t, m, press("s"))
	if !ld.runs[len(ld.runs)-1].stopped || m.load.running() {
		t.Errorf("s should stop the run")
	}
	tuitest.CheckFits(t, m.Render(), 100, 30)
}

func TestDemoStepsRecordResults(t *testing.T) {
	ld := &fakeLoader{}
	src := &fakeSource{}
	m := New(Options{Source: src, Interval: time.Second, HotThreshold: 1000, NoColor: true, FixedBackground: true, Load: ld, Demo: true, DemoStep: time.Hour}, "h", "k").handleResize(100, 40)
	m = sampled(t, m)
	// The fixture's 402,118 cs/s on 2 CPUs is a busy host's baseline.
	if !strings.Contains(m.Render(), "DEMO 1/8") || !strings.Contains(m.Render(), "baseline, host busy") {
		t.Fatalf("demo should open on the baseline:\n%s", m.Render())
	}
	m, _ = step(t, m, press("n"))
	if len(ld.runs) != 1 || ld.runs[0].cpus != nil {
		t.Fatalf("step 2 runs futex unpinned: %d runs", len(ld.runs))
	}
	m = sampled(t, m)
	m, _ = step(t, m, press("n"))
	if got := ld.runs[1].cpus; !cmp.Equal(got, []int{0}) || !ld.runs[0].stopped {
		t.Errorf("step 3 pins to one CPU: %v, previous stopped=%v", got, ld.runs[0].stopped)
	}
	out := ansi.Strip(m.Render())
	for _, want := range []string{"baseline, host busy", "futex, unpinned", "5,000", "2,500", "402,118"} {
		if !strings.Contains(out, want) {
			t.Errorf("results lack %q:\n%s", want, out)
		}
	}
	m, _ = step(t, m, press("space"))
	if !m.demo.held || m.paused {
		t.Errorf("space holds the demo step without pausing sampling")
	}
	next, _ := m.Update(demoMsg{gen: m.demo.gen})
	if next.(Model).demo.cur != 2 {
		t.Errorf("a held step advanced")
	}
	m, _ = step(t, m, press("N"))
	if m.demo.cur != 1 || len(ld.runs) != 3 {
		t.Errorf("N goes back and restarts that step's run: step %d, %d runs", m.demo.cur, len(ld.runs))
	}
	tuitest.CheckFits(t, m.Render(), 100, 40)
}

// After the last step the tour records that step's row, stops its workload
// and says it is finished: nothing is left spinning for q to stop.
func TestDemoEndsCleanly(t *testing.T) {
	ld := &fakeLoader{}
	m := New(Options{Source: &fakeSource{}, Interval: time.Second, HotThreshold: 1000, NoColor: true, FixedBackground: true, Load: ld, Demo: true, DemoStep: time.Hour}, "h", "k").handleResize(100, 40)
	for range len(demoSteps) - 1 {
		m = sampled(t, m)
		m, _ = step(t, m, press("n"))
	}
	m = sampled(t, m)
	if m.demo.cur != len(demoSteps)-1 || !m.load.running() {
		t.Fatalf("on the last step with its load running: step %d running %v", m.demo.cur, m.load.running())
	}
	// The last step's timer fires.
	next, cmd := m.Update(demoMsg{gen: m.demo.gen})
	m = next.(Model)
	if m.load.running() {
		t.Errorf("the last step's workload still runs after the tour")
	}
	for i, r := range ld.runs {
		if !r.stopped {
			t.Errorf("run %d was left running", i)
		}
	}
	if cmd != nil {
		if msg := runWithin(cmd, 50*time.Millisecond); msg != nil {
			t.Errorf("a finished tour scheduled %T", msg)
		}
	}
	out := ansi.Strip(m.Render())
	for _, want := range []string{"finished", demoSteps[len(demoSteps)-1].title} {
		if !strings.Contains(out, want) {
			t.Errorf("finished screen lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out[strings.Index(out, "ns/round trip"):], demoSteps[len(demoSteps)-1].title) {
		t.Errorf("the last step has no row in the results:\n%s", out)
	}
	// n does nothing more; N goes back to the last step and runs it again.
	m, _ = step(t, m, press("n"))
	if m.load.running() {
		t.Errorf("n after the end started a workload")
	}
	m, _ = step(t, m, press("N"))
	if m.demo.cur != len(demoSteps)-1 || !m.load.running() {
		t.Errorf("N after the end: step %d running %v", m.demo.cur, m.load.running())
	}
	tuitest.CheckFits(t, m.Render(), 100, 40)
}

// Help takes the whole body even with the load panel open, so the legend
// still fits 80x24.
func TestHelpFitsWithLoadPanelOpen(t *testing.T) {
	m := New(Options{Source: &fakeSource{}, Interval: time.Second, NoColor: true, FixedBackground: true, Load: &fakeLoader{}}, "h", "k").handleResize(80, 24)
	m = sampled(t, m)
	m, _ = step(t, m, press("L"))
	m, _ = step(t, m, press("?"))
	out := ansi.Strip(m.Render())
	for _, want := range []string{"load: start/stop", "highlighted, stronger at 10×"} {
		if !strings.Contains(out, want) {
			t.Errorf("help with the panel open lacks %q:\n%s", want, out)
		}
	}
	m, _ = step(t, m, press("x"))
	if out := ansi.Strip(m.Render()); !strings.Contains(out, "LOAD") {
		t.Errorf("leaving help should bring the panel back:\n%s", out)
	}
	tuitest.CheckFits(t, m.Render(), 80, 24)
}

// The demo at 80x24 leaves the table four rows. The row on top when the
// tour starts (a quiet kernel thread) must not drag the view down with it
// once the workload's threads outrank it: they stay on screen.
func TestDemoKeepsWorkloadRowsOnScreen(t *testing.T) {
	idle := tuitest.Snapshot()
	idle.Threads = []model.ThreadRates{{PID: 15, TID: 15, Comm: "rcu_preempt", VoluntaryPerSec: 50}}
	busy := tuitest.Snapshot()
	busy.Threads = append([]model.ThreadRates{
		{PID: os.Getpid(), TID: os.Getpid() + 100000, Comm: "ping-futex", VoluntaryPerSec: 300000},
		{PID: os.Getpid(), TID: os.Getpid() + 100001, Comm: "pong-futex", VoluntaryPerSec: 299000},
	}, busy.Threads...)
	busy.Threads = append(busy.Threads, model.ThreadRates{PID: 15, TID: 15, Comm: "rcu_preempt", VoluntaryPerSec: 0.5})
	src := &fakeSource{snaps: []model.Snapshot{idle, busy}}
	m := New(Options{Source: src, Interval: time.Second, HotThreshold: 1000, NoColor: true, FixedBackground: true, Load: &fakeLoader{}, Demo: true, DemoStep: time.Hour}, "h", "k").handleResize(80, 24)
	m = sampled(t, m)
	m, _ = step(t, m, press("n"))
	for range 3 {
		m = sampled(t, m)
		out := ansi.Strip(m.Render())
		if !strings.Contains(out, "ping-futex") || !strings.Contains(out, "pong-futex") {
			t.Fatalf("the workload's rows are off screen:\n%s", out)
		}
	}
}
