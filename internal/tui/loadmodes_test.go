package tui

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// registryLoader describes the load package's real modes, as the monitor
// gets them, but starts fake runs: the panel's figures are then fixed.
type registryLoader struct {
	loadLoader
	runs  []*fakeRun
	modes []string
}

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
	ld := &registryLoader{loadLoader: loadLoader{cpus: []int{0, 1}}}
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

// TestLoadPanelRunsPool: m to pool and s in the panel start a real pool,
// in a workload process of its own: its threads, named pool-worker, one
// per allowed CPU, are the run's, doing work items, and the panel shows
// items/s; s stops them and the process is gone.
func TestLoadPanelRunsPool(t *testing.T) {
	ld := NewLoader()
	m := New(Options{Source: &fakeSource{}, Interval: time.Second, NoColor: true, FixedBackground: true, Load: ld}, "h", "k").handleResize(80, 24)
	m, _ = step(t, m, press("L"))
	for range len(ld.Modes()) {
		if m.load.modeName() == "pool" {
			break
		}
		m, _ = step(t, m, press("m"))
	}
	md := m.load.current()
	if md.Name != "pool" || md.Threads < 1 {
		t.Fatalf("m never reached pool with its threads: at %+v", md)
	}
	m, _ = step(t, m, press("s"))
	if !m.load.running() {
		t.Fatalf("s did not start pool: %s", m.load.err)
	}
	defer func() { m.stopLoad() }()
	// A busy machine may take seconds to start and calibrate a pool.
	deadline := time.Now().Add(60 * time.Second)
	for {
		m = sampled(t, m)
		p := m.load.progress
		if p.RoundTrips > 0 && p.NsPerRoundTrip > 0 && len(p.TIDs) == md.Threads {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no work items from %d pool threads after 60 s: %+v", md.Threads, p)
		}
		time.Sleep(50 * time.Millisecond)
	}
	p := m.load.progress
	if p.ChildPID == 0 || p.ChildPID == os.Getpid() {
		t.Fatalf("pool runs in process %d, the monitor is %d", p.ChildPID, os.Getpid())
	}
	for _, tid := range p.TIDs {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/comm", p.ChildPID, tid))
		if err != nil {
			t.Errorf("pool thread %d: %v", tid, err)
			continue
		}
		if comm := strings.TrimSpace(string(b)); comm != "pool-worker" {
			t.Errorf("pool thread %d is %q, want pool-worker", tid, comm)
		}
	}
	if v := ansi.Strip(m.panelView()); !strings.Contains(v, "items/s") || !strings.Contains(v, "pool, ") {
		t.Errorf("the panel does not show the pool's items/s:\n%s", v)
	}
	m, _ = step(t, m, press("s"))
	if m.load.running() {
		t.Fatal("s did not stop pool")
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", p.ChildPID)); err == nil {
		t.Errorf("the pool's process %d outlived its stop", p.ChildPID)
	}
}
