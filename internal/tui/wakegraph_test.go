package tui

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/testutil"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
	"github.com/ctxtop/ctxtop/internal/tui/wakegraph"
)

// fakeSwitch records what the root asked of the tracer.
type fakeSwitch struct {
	mu      sync.Mutex
	want    bool
	wants   []bool
	applied []bool
	perCPU  []bool
}

func (f *fakeSwitch) WantPerCPU(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.perCPU = append(f.perCPU, on)
}

func (f *fakeSwitch) Want(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.want = on
	f.wants = append(f.wants, on)
}

func (f *fakeSwitch) Apply() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applied = append(f.applied, f.want)
}

func (f *fakeSwitch) log() ([]bool, []bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]bool(nil), f.wants...), append([]bool(nil), f.applied...)
}

func wakeRoot(t *testing.T) (Model, *fakeSwitch) {
	t.Helper()
	s := tuitest.Snapshot()
	s.Wakeups = tuitest.Wakeups()
	sw := &fakeSwitch{}
	m := New(Options{Source: &fakeSource{snaps: []model.Snapshot{s}}, Interval: time.Second, HotThreshold: 1000, NoColor: true,
		Version: "test", FixedBackground: true, Wakeups: sw}, "db-7", "6.18.0")
	return m.handleResize(100, 30), sw
}

func TestWakeupViewAttachesOnlyWhileOpen(t *testing.T) {
	m, sw := wakeRoot(t)
	m = sampled(t, m)
	m, _ = step(t, m, press("j")) // moving in the table needs no tracer
	if wants, _ := sw.log(); len(wants) != 0 {
		t.Fatalf("table view asked for the tracer: %v", wants)
	}
	m, _ = step(t, m, press("W"))
	if m.view != viewWakeups {
		t.Fatalf("W: view %v, want the wake-up view", m.view)
	}
	m = sampled(t, m)
	if got := m.Render(); !strings.Contains(got, "pp-ping") || !strings.Contains(got, "WAKEE") {
		t.Errorf("wake-up view does not show the pairs:\n%s", got)
	}
	// Help over the wake-up view keeps it attached; back to the table drops it.
	m, _ = step(t, m, press("?"))
	m, _ = step(t, m, press("x"))
	m, _ = step(t, m, press("W"))
	if m.view != viewTable {
		t.Fatalf("second W: view %v, want the table", m.view)
	}
	m, _ = step(t, m, press("c"))
	m, _ = step(t, m, press("c"))
	wants, applied := sw.log()
	if diff := cmp.Diff([]bool{true, false, true, false}, wants); diff != "" {
		t.Errorf("tracer wishes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wants, applied); diff != "" {
		t.Errorf("every wish applied off the loop (-want +got):\n%s", diff)
	}
	// The per-CPU counters, which run at every switch, only for the
	// per-CPU view.
	sw.mu.Lock()
	perCPU := sw.perCPU
	sw.mu.Unlock()
	if diff := cmp.Diff([]bool{false, false, true, false}, perCPU); diff != "" {
		t.Errorf("per-CPU counter wishes (-want +got):\n%s", diff)
	}
}

func TestWakeupEnterOpensWakeeAndEscReturns(t *testing.T) {
	m, _ := wakeRoot(t)
	m = sampled(t, m)
	m, _ = step(t, m, press("W"))
	m = sampled(t, m)
	// Filter to the pool, then Enter on its busiest pair: 911 wakes 912.
	for _, k := range []string{"/", "p", "o", "o", "l", "enter"} {
		m, _ = step(t, m, press(k))
	}
	if m.view != viewWakeups {
		t.Fatalf("filtering left the view: %v", m.view)
	}
	m, out := step(t, m, press("enter"))
	if len(out) != 1 {
		t.Fatalf("Enter: messages %v, want one OpenMsg", out)
	}
	m, _ = step(t, m, out[0])
	if m.view != viewDetail || m.detail.TID() != 912 {
		t.Fatalf("after Enter: view %v, detail of %d; want the detail of 912", m.view, m.detail.TID())
	}
	// pool-1-thread-1 shows elsewhere in the detail too (the process's
	// other hot threads): look only at the wakers.
	if got := m.Render(); !strings.Contains(testutil.Between(got, "woken by", "wakes"), "pool-1-thread-1") {
		t.Errorf("wakee detail lacks its wakers:\n%s", got)
	}
	m, _ = step(t, m, press("esc"))
	if m.view != viewWakeups || m.wake.view.Filter() != "pool" {
		t.Errorf("Esc from the wakee: view %v filter %q, want the wake-up view as left", m.view, m.wake.view.Filter())
	}
	// q typed into the filter is text, not quit.
	m, _ = step(t, m, press("/"))
	m, _ = step(t, m, press("q"))
	if m.view != viewWakeups || m.wake.view.Filter() != "poolq" {
		t.Errorf("filter %q, want poolq", m.wake.view.Filter())
	}
}

func TestWakeupOpenIgnoresNoThread(t *testing.T) {
	m, _ := wakeRoot(t)
	m = m.openWakee(wakegraph.OpenMsg{})
	if m.view != viewTable {
		t.Errorf("OpenMsg without a TID changed the view to %v", m.view)
	}
}

func TestLoadAttachesTracerUntilItEnds(t *testing.T) {
	s := loadSnapshot()
	tid := os.Getpid() + 100000 // the fake run's thread
	s.Wakeups = &model.Wakeups{Interval: time.Second, Pairs: []model.WakeupPair{
		{WakerPID: os.Getpid(), WakerTID: tid, WakerComm: "ping-futex", WakeePID: os.Getpid(), WakeeTID: tid, WakeeComm: "pong-futex",
			PerSec: 90_000, CrossCPUPercent: 100, LatencyP50Micros: 24.5, LatencyP99Micros: 61, Resolved: 100, Timed: 100},
	}}
	sw := &fakeSwitch{}
	ld := &fakeLoader{}
	m := New(Options{Source: &fakeSource{snaps: []model.Snapshot{s}}, Interval: time.Second, HotThreshold: 1000, NoColor: true,
		Version: "test", FixedBackground: true, Wakeups: sw, Load: ld}, "db-7", "6.18.0")
	m = m.handleResize(100, 30)
	m, _ = step(t, m, press("L"))
	m, _ = step(t, m, press("s"))
	m = sampled(t, m)
	if got := ansi.Strip(m.Render()); !strings.Contains(got, "100% of 90,000 wake-ups/s cross-CPU") || !strings.Contains(got, "p50 24.5 µs") {
		t.Errorf("load panel lacks the load's wake-ups:\n%s", got)
	}
	close(ld.runs[0].done)
	sampled(t, m)
	wants, _ := sw.log()
	if diff := cmp.Diff([]bool{true, false}, wants); diff != "" {
		t.Errorf("tracer wishes over a load that ended by itself (-want +got):\n%s", diff)
	}
}

func TestWakeeOutsideTheTableKeepsItsName(t *testing.T) {
	m, _ := wakeRoot(t)
	m = sampled(t, m)
	m = m.openWakee(wakegraph.OpenMsg{PID: 31337, TID: 31338, Comm: "elsewhere"})
	if got := ansi.Strip(m.Render()); !strings.Contains(got, "thread 31338 elsewhere  of process 31337") {
		t.Errorf("detail of a wakee the table does not hold:\n%s", got)
	}
}
