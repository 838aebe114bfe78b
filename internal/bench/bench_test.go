package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/load"
)

func TestPlan(t *testing.T) {
	d := time.Second
	type row struct {
		E    Experiment
		Mode load.Mode
		CPUs []int
	}
	rows := func(cells []*Cell) []row {
		var out []row
		for _, c := range cells {
			if c.Config.Duration != d {
				t.Errorf("%s: duration %v, want %v", c.Label(), c.Config.Duration, d)
			}
			out = append(out, row{c.Experiment, c.Config.Mode, c.Config.CPUs})
		}
		return out
	}
	got := rows(Plan([]load.Mode{load.ModeSyscall, load.ModeGoroutine, load.ModeFutex}, []int{2, 5}, d))
	want := []row{
		{NoSwitch, load.ModeSyscall, nil},
		{NoSwitch, load.ModeSyscall, []int{2}},
		{NoSwitch, load.ModeGoroutine, nil},
		{NoSwitch, load.ModeGoroutine, []int{2}},
		{Switches, load.ModeFutex, nil},
		{Switches, load.ModeFutex, []int{2}},
		{Switches, load.ModeFutex, []int{2, 5}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Plan on CPUs 2,5 (-want +got):\n%s", diff)
	}
	got = rows(Plan([]load.Mode{load.ModeFutex}, []int{0}, d))
	want = []row{{Switches, load.ModeFutex, nil}, {Switches, load.ModeFutex, []int{0}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Plan on one CPU (-want +got):\n%s", diff)
	}
}

// cell makes a cell whose runs took these ns per round trip, with
// switchesPerTrip kernel-counted switches each.
func cell(m load.Mode, cpus []int, switchesPerTrip float64, ns ...float64) *Cell {
	c := &Cell{Experiment: Switches, Config: load.Config{Mode: m, CPUs: cpus}}
	if m == load.ModeSyscall || m == load.ModeGoroutine {
		c.Experiment = NoSwitch
	}
	for _, v := range ns {
		c.Runs = append(c.Runs, load.Summary{Mode: m, CPUs: cpus, Pairs: 1, DurationS: 1, RoundTrips: uint64(1e9 / v),
			NsPerRoundTrip: v, SwitchesPerRoundTrip: switchesPerTrip, NsPerSwitch: load.NsPerSwitch(v, switchesPerTrip),
			SwitchesVoluntary: uint64(switchesPerTrip * 1e9 / v)})
	}
	return c
}

func TestSpread(t *testing.T) {
	got := spreadOf([]float64{30, 10, 20})
	if diff := cmp.Diff(Spread{Median: 20, Min: 10, Max: 30, N: 3}, got); diff != "" {
		t.Errorf("spread (-want +got):\n%s", diff)
	}
	if got := spreadOf([]float64{4, 1, 3, 2}).Median; got != 2 {
		t.Errorf("median of four = %v, want the lower middle, 2", got)
	}
	for _, c := range []struct {
		a, b Spread
		want bool
	}{
		{Spread{Min: 1, Max: 2, N: 3}, Spread{Min: 3, Max: 4, N: 3}, true},
		{Spread{Min: 3, Max: 4, N: 3}, Spread{Min: 1, Max: 2, N: 3}, true},
		{Spread{Min: 1, Max: 3, N: 3}, Spread{Min: 3, Max: 4, N: 3}, false}, // touching
		{Spread{Min: 1, Max: 5, N: 3}, Spread{Min: 2, Max: 3, N: 3}, false}, // inside
		{Spread{Min: 1, Max: 2}, Spread{Min: 3, Max: 4, N: 3}, false},       // no runs
	} {
		if got := Apart(c.a, c.b); got != c.want {
			t.Errorf("Apart(%+v, %+v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestConclusionsOnlyBeyondSpread: a difference is stated when the runs of
// two cells do not overlap, and reported as no clear difference when they
// do, however far apart the medians.
func TestConclusionsOnlyBeyondSpread(t *testing.T) {
	apart := []*Cell{
		cell(load.ModeFutex, nil, 2, 22000, 24000, 26000),
		cell(load.ModeFutex, []int{0}, 2, 6500, 6000, 7000),
		cell(load.ModeFutex, []int{0, 1}, 1.5, 30000, 28000, 33000),
	}
	want := []string{
		"pinning both futex sides to one CPU made a round trip 3.7× faster (median 24,000 → 6,500 ns; runs 22,000–26,000 vs 6,000–7,000)",
		"one futex side on each of two CPUs instead of both on one made a round trip 4.6× slower (median 6,500 → 30,000 ns; runs 6,000–7,000 vs 28,000–33,000)",
	}
	if diff := cmp.Diff(want, Conclusions(apart, Switches)); diff != "" {
		t.Errorf("spreads apart (-want +got):\n%s", diff)
	}

	// Process against thread on one CPU: medians 1.5× apart, but one slow
	// run of the thread pair overlaps the process pair's runs.
	overlap := []*Cell{
		cell(load.ModeFutex, nil, 2, 20000, 9000, 30000),
		cell(load.ModeFutex, []int{0}, 2, 7000, 6000, 12000),
		cell(load.ModePipe, []int{0}, 2, 8000, 8200, 15000),
		cell(load.ModeProcess, []int{0}, 2, 12000, 13000, 14000),
	}
	want = []string{
		"pinning both futex sides to one CPU: no clear difference (runs 9,000–30,000 ns vs 6,000–12,000 ns overlap)",
		"on one CPU a switch between processes and one between threads: no clear difference (runs 6,000–7,000 ns vs 4,000–7,500 ns overlap)",
	}
	if diff := cmp.Diff(want, Conclusions(overlap, Switches)); diff != "" {
		t.Errorf("spreads overlapping (-want +got):\n%s", diff)
	}
}

func TestConclusionsNoSwitch(t *testing.T) {
	cells := []*Cell{
		cell(load.ModeSyscall, nil, 0, 1000, 1100, 900),
		cell(load.ModeGoroutine, nil, 0.003, 300, 310, 290),
		cell(load.ModeGoroutine, []int{0}, 0.003, 280, 320, 300),
		cell(load.ModeFutex, nil, 2, 24000, 22000, 26000),
		cell(load.ModeFutex, []int{0}, 2, 6000, 5800, 6400),
	}
	want := []string{
		"a goroutine hand-off round trip against a futex round trip between OS threads (unpinned) was 80× cheaper (median 24,000 → 300 ns; runs 22,000–26,000 vs 290–310)",
		"against the cheapest thread round trip (futex, both on one CPU) it was 20× cheaper (median 6,000 → 300 ns; runs 5,800–6,400 vs 290–310)",
		"goroutine hand-offs never enter the kernel, yet the process's threads made 9,677–10,344 switches/s over the runs: the Go runtime's idle Ps parking and being woken",
		"pinning the whole Go process to one CPU: no clear difference (runs 290–310 ns vs 280–320 ns overlap)",
		"a system call took 1,000 ns (runs 900–1,100), with 0.0000 switches each; a futex switch on one CPU cost 3 system calls",
	}
	if diff := cmp.Diff(want, Conclusions(cells, NoSwitch)); diff != "" {
		t.Errorf("Conclusions (-want +got):\n%s", diff)
	}
}

// TestSingleRunSaysSo: with one run per cell there is no spread, and the
// conclusions say so before stating any difference.
func TestSingleRunSaysSo(t *testing.T) {
	cells := []*Cell{cell(load.ModeFutex, nil, 2, 24000), cell(load.ModeFutex, []int{0}, 2, 6000)}
	got := Conclusions(cells, Switches)
	if len(got) != 2 || !strings.HasPrefix(got[0], "one run per cell: no spread") || !strings.Contains(got[1], "4.0× faster") {
		t.Errorf("Conclusions of single runs: %q", got)
	}
}

// TestTableFromMedianRun: a row's ns per switch and switches per round trip
// come from the run with the median round trip, so ns per switch never
// exceeds ns per round trip when there is a switch or more per trip; a
// median of ns per switch taken over the runs on its own did (41,262 over a
// 40,322 ns round trip, measured).
func TestTableFromMedianRun(t *testing.T) {
	c := &Cell{Experiment: Switches, Config: load.Config{Mode: load.ModeFutex, CPUs: []int{0, 1}}}
	for _, r := range []struct{ ns, perTrip float64 }{{25759, 1.3}, {40322, 1.9}, {77244, 1.2}} {
		c.Runs = append(c.Runs, load.Summary{Mode: load.ModeFutex, CPUs: []int{0, 1}, Pairs: 1, DurationS: 1, RoundTrips: 1000,
			NsPerRoundTrip: r.ns, SwitchesPerRoundTrip: r.perTrip, NsPerSwitch: load.NsPerSwitch(r.ns, r.perTrip)})
	}
	tb := tables([]*Cell{c})
	if len(tb) != 1 || len(tb[0].rows) != 1 {
		t.Fatalf("tables: %+v", tb)
	}
	want := []string{"futex", "CPUs 0,1", "40,322", "25,759–77,244", "21,222", "1.90", "-"}
	if diff := cmp.Diff(want, tb[0].rows[0]); diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}
}
