package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/load"
)

func TestPlanWorkingSetAndPool(t *testing.T) {
	d := time.Second
	var got []string
	for _, c := range PlanWorkingSet([]load.Mode{load.ModeSyscall, load.ModeFutex, load.ModeGoroutine, load.ModeProcess}, []int64{0, 1 << 20}, []int{3, 4}, d) {
		got = append(got, c.Label())
		if c.Experiment != WorkingSet || c.Config.Duration != d {
			t.Errorf("%s: experiment %q, duration %v", c.Label(), c.Experiment, c.Config.Duration)
		}
	}
	want := []string{"futex, both on CPU 3, working set 0", "futex, both on CPU 3, working set 1M",
		"process, both on CPU 3, working set 0", "process, both on CPU 3, working set 1M"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PlanWorkingSet (-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		cpus int
		want []int
	}{{2, []int{1, 2, 4, 16}}, {1, []int{1, 2, 8}}, {1024, []int{1, 1024, 2048}}} {
		if diff := cmp.Diff(c.want, PoolSizes(c.cpus)); diff != "" {
			t.Errorf("PoolSizes(%d) (-want +got):\n%s", c.cpus, diff)
		}
	}
	for _, c := range PlanPool(load.ModePool, 2, d) {
		if c.Experiment != Pool || c.Config.Mode != load.ModePool || c.Config.Duration != d {
			t.Errorf("pool cell %+v", c)
		}
	}
}

func poolCell(threads int, invol float64, wait float64, itemsPerSec ...float64) *Cell {
	c := &Cell{Experiment: Pool, Config: load.Config{Mode: load.ModePool, Threads: threads}}
	for _, v := range itemsPerSec {
		w := wait
		c.Runs = append(c.Runs, load.Summary{Mode: load.ModePool, Threads: threads, DurationS: 1, Items: uint64(v), ItemsPerSec: v,
			InvoluntaryPerSec: invol, RunQueueWaitShare: &w, HWNote: "no PMU"})
	}
	return c
}

// TestPoolConclusions: more threads than CPUs are compared with one per
// CPU, in items/s only beyond the spread, always with the involuntary
// switches and the run-queue wait that explain it.
func TestPoolConclusions(t *testing.T) {
	cells := []*Cell{
		poolCell(1, 10, 0.01, 9900, 10000, 10100),
		poolCell(2, 20, 0.02, 19500, 19800, 20000),
		poolCell(4, 400, 0.5, 19000, 19100, 19300),
		poolCell(16, 800, 0.87, 18500, 19200, 19900),
	}
	want := []string{
		"2 threads did 2.0× the items/s of one (median 19,800 vs 10,000; runs 19,500–20,000 vs 9,900–10,100)",
		"4 threads on 2 CPUs did 4% fewer items/s than 2 (median 19,100 vs 19,800; runs 19,000–19,300 vs 19,500–20,000), with 20× the involuntary switches (400 vs 20/s) and 50% of their time waiting for a CPU instead of 2%",
		"16 threads on 2 CPUs did as many items/s as 2 within the runs' spread (18,500–19,900 vs 19,500–20,000), with 40× the involuntary switches (800 vs 20/s) and 87% of their time waiting for a CPU instead of 2%: more threads than CPUs bought nothing",
	}
	if diff := cmp.Diff(want, Conclusions(cells, Pool)[:3]); diff != "" {
		t.Errorf("pool conclusions (-want +got):\n%s", diff)
	}
	if got := Conclusions(cells, Pool); !strings.Contains(got[len(got)-1], "n/a: no PMU") {
		t.Errorf("no line on the missing hardware counters: %q", got)
	}
	var b bytes.Buffer
	WriteText(&b, cells)
	for _, w := range []string{"threads  items/s", "run-queue wait", "n/a"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, b.String())
		}
	}
	// No run measured IPIs: the terminal table leaves the column out, the
	// markdown keeps it.
	b.Reset()
	WriteMarkdown(&b, cells)
	if !strings.Contains(b.String(), "IPIs/item") {
		t.Errorf("markdown lacks IPIs/item:\n%s", b.String())
	}
}

func wsCell(m load.Mode, size int64, walk float64, ns ...float64) *Cell {
	c := cell(m, []int{0}, 2, ns...)
	c.Experiment, c.Config.WorkingSet = WorkingSet, size
	for i := range c.Runs {
		c.Runs[i].WorkingSet = size
		if size > 0 {
			c.Runs[i].WalkNsPerRoundTrip = walk
			c.Runs[i].NsPerRoundTripNet = c.Runs[i].NsPerRoundTrip - walk
		}
	}
	return c
}

// TestWorkingSetConclusions: the indirect cost is the round trip net of
// the walks less the same without a working set, stated beyond the spread.
func TestWorkingSetConclusions(t *testing.T) {
	cells := []*Cell{
		wsCell(load.ModeFutex, 0, 0, 6000, 6100, 6200),
		wsCell(load.ModeFutex, 1<<20, 20000, 36000, 37000, 38000),
		wsCell(load.ModeProcess, 0, 0, 7000, 7100, 7200),
		wsCell(load.ModeProcess, 64<<10, 2000, 8000, 9200, 9400),
		wsCell(load.ModePipe, 0, 0, 7000, 7100, 7200),
		wsCell(load.ModePipe, 1<<20, 22000, 26000, 26100, 26200),
	}
	want := []string{
		"futex with 1M per side: a round trip cost 17,000 ns net of the walks against 6,100 ns with none: refilling the caches after each switch added 10,900 ns (runs 16,000–18,000 vs 6,000–6,200)",
		"pipe with 1M per side: a round trip cost less net of the walks (4,100 ns) than with none (7,100 ns; runs 4,000–4,200 vs 7,000–7,200): no indirect cost shows, the walk measured alone was the slower one",
		"process with 64K per side: no clear indirect cost (net round trips 6,000–7,400 vs 7,000–7,200 ns overlap with none)",
	}
	if diff := cmp.Diff(want, Conclusions(cells, WorkingSet)); diff != "" {
		t.Errorf("working-set conclusions (-want +got):\n%s", diff)
	}
	var b bytes.Buffer
	WriteText(&b, cells)
	if !strings.Contains(b.String(), "10,900") || !strings.Contains(b.String(), "net ns/trip") {
		t.Errorf("working-set table lacks the indirect cost:\n%s", b.String())
	}
}

func withIPIs(c *Cell, ipis float64) *Cell {
	for i := range c.Runs {
		v := ipis
		c.Runs[i].WakeupIPIsPerRoundTrip = &v
	}
	return c
}

// TestIPIConclusion names the cause of pinning's gain from the IPI counts.
func TestIPIConclusion(t *testing.T) {
	cells := []*Cell{
		withIPIs(cell(load.ModeFutex, nil, 2, 22000, 24000, 26000), 0.98),
		withIPIs(cell(load.ModeFutex, []int{0}, 2, 6500, 6000, 7000), 0.001),
		withIPIs(cell(load.ModeFutex, []int{0, 1}, 1.5, 30000, 28000, 33000), 1.0),
	}
	got := Conclusions(cells, Switches)
	want := "futex unpinned: 0.98 wake-up IPIs (rescheduling and function-call) per round trip; pinned to one CPU: 0.00 — the wake-up no longer crosses CPUs; one side on each of two CPUs: 1.00"
	if diff := cmp.Diff(want, got[len(got)-1]); diff != "" {
		t.Errorf("IPI conclusion (-want +got):\n%s", diff)
	}
	withIPIs(cells[1], 0.9)
	got = Conclusions(cells, Switches)
	if strings.Contains(got[len(got)-1], "no longer crosses") {
		t.Errorf("claims the wake-up stopped crossing CPUs at 0.9 IPIs per round trip pinned: %q", got[len(got)-1])
	}
}
