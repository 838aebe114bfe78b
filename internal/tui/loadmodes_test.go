package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// registryModes are the load package's modes as the composition root's
// Loader describes them on a host of two CPUs (its tests check they are).
var registryModes = []LoadMode{
	{Name: "syscall", Title: "one thread calling getppid: no context switch", MaxCPUs: 1, Unit: "round trip", Units: "round trips"},
	{Name: "goroutine", Title: "two goroutines over channels: no kernel switch", MaxCPUs: 2, Unit: "round trip", Units: "round trips"},
	{Name: "futex", Title: "two threads waking each other with a futex", MaxCPUs: 2, Unit: "round trip", Units: "round trips"},
	{Name: "pipe", Title: "two threads passing a byte over pipes", MaxCPUs: 2, Unit: "round trip", Units: "round trips"},
	{Name: "process", Title: "two processes passing a byte over pipes", MaxCPUs: 2, Unit: "round trip", Units: "round trips"},
	{Name: "pool", Title: "CPU-bound threads doing fixed work items", Threads: 2, Unit: "item", Units: "items"},
	{Name: "poll", Title: "threads each sleeping a period and waking", Threads: 2, Unit: "wake-up", Units: "wake-ups"},
}

// registryLoader describes the load package's real modes, as the monitor
// gets them, but starts fake runs: the panel's figures are then fixed.
type registryLoader struct {
	runs  []*fakeRun
	modes []string
}

func (r *registryLoader) Modes() []LoadMode  { return registryModes }
func (r *registryLoader) AllowedCPUs() []int { return []int{0, 1} }

func (r *registryLoader) Start(mode string, cpus []int) (LoadRun, error) {
	run := &fakeRun{cpus: cpus, done: make(chan struct{})}
	r.runs = append(r.runs, run)
	r.modes = append(r.modes, mode)
	return run, nil
}

// TestLoadPanelCyclesEveryMode: m walks every registered mode, pool and
// poll included, and back to futex; each shows its own figures when run
// (a threaded mode its units per second, not round trips) and p does what
// the mode supports: two CPUs for a pair, one for syscall's one thread,
// and for a threaded mode no pinning, said in so many words.
func TestLoadPanelCyclesEveryMode(t *testing.T) {
	ld := &registryLoader{}
	src := &fakeSource{snaps: []model.Snapshot{loadSnapshot()}}
	m := New(Options{Source: src, Interval: time.Second, HotThreshold: 1000, NoColor: true, FixedBackground: true, Load: ld}, "h", "k").handleResize(80, 24)
	m, _ = step(t, m, press("L"))
	want := []string{"futex", "pipe", "process", "pool", "poll", "syscall", "goroutine", "futex"}
	var names, views []string
	for i := range want {
		name := m.load.modeName()
		names = append(names, name)
		if i == len(want)-1 {
			break
		}
		show := func(what string) {
			t.Helper()
			v := ansi.Strip(m.panelView())
			tuitest.CheckFits(t, v, 80, 3)
			views = append(views, fmt.Sprintf("== %s, %s\n%s", name, what, v))
		}
		show("stopped")
		m, _ = step(t, m, press("s"))
		m = sampled(t, m)
		show("running")
		var pins []string
		for i := range 3 {
			m, _ = step(t, m, press("p"))
			m = sampled(t, m)
			last := ld.runs[len(ld.runs)-1]
			pins = append(pins, fmt.Sprint(last.cpus))
			if last.stopped {
				t.Errorf("%s: p left the panel showing a stopped run", name)
			}
			if i == 0 {
				show("p pressed")
			}
		}
		show("p pressed 3 times, the runs pinned to " + strings.Join(pins, " "))
		m, _ = step(t, m, press("s"))
		m.load.pin = pinNone
		m, _ = step(t, m, press("m"))
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("modes m cycles through (-want +got)\n%s", diff)
	}
	tuitest.Golden(t, "80x24", strings.Join(views, "\n"))
}

// TestDemoLoadsAreWhatTheDemoStarts: DemoLoads, which the composition
// root's tests parse with the real loader, lists exactly the specs the
// tour passes to Start, in the order it first starts them.
func TestDemoLoadsAreWhatTheDemoStarts(t *testing.T) {
	ld := &registryLoader{}
	m := New(Options{Source: &fakeSource{}, Interval: time.Second, HotThreshold: 1000, NoColor: true, FixedBackground: true, Load: ld, Demo: true, DemoStep: time.Hour}, "h", "k").handleResize(100, 40)
	for range len(demoSteps) - 1 {
		m = sampled(t, m)
		m, _ = step(t, m, press("n"))
	}
	sampled(t, m)
	var started []string
	for _, md := range ld.modes {
		if !slices.Contains(started, md) {
			started = append(started, md)
		}
	}
	if diff := cmp.Diff(started, DemoLoads()); diff != "" {
		t.Errorf("DemoLoads against the specs the demo started (-started +DemoLoads):\n%s", diff)
	}
	if len(started) < 2 {
		t.Errorf("the demo started only %q", started)
	}
}
