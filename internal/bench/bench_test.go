package bench

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/load"
)

func TestPlan(t *testing.T) {
	d := time.Second
	got := Plan([]load.Mode{load.ModeSyscall, load.ModeGoroutine, load.ModeFutex}, []int{2, 5}, d)
	want := []load.Config{
		{Mode: load.ModeSyscall, Duration: d},
		{Mode: load.ModeSyscall, CPUs: []int{2}, Duration: d},
		{Mode: load.ModeGoroutine, Duration: d},
		{Mode: load.ModeFutex, Duration: d},
		{Mode: load.ModeFutex, CPUs: []int{2}, Duration: d},
		{Mode: load.ModeFutex, CPUs: []int{2, 5}, Duration: d},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Plan on CPUs 2,5 (-want +got):\n%s", diff)
	}
	got = Plan([]load.Mode{load.ModeFutex}, []int{0}, d)
	want = []load.Config{{Mode: load.ModeFutex, Duration: d}, {Mode: load.ModeFutex, CPUs: []int{0}, Duration: d}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Plan on one CPU (-want +got):\n%s", diff)
	}
}

func sum(m load.Mode, cpus []int, nsTrip, switchesPerTrip float64) load.Summary {
	s := load.Summary{Mode: m, CPUs: cpus, Pairs: 1, RoundTrips: 1000, NsPerRoundTrip: nsTrip, SwitchesPerRoundTrip: switchesPerTrip}
	if switchesPerTrip > 0 {
		s.NsPerSwitch = nsTrip / switchesPerTrip
	}
	return s
}

func TestConclusions(t *testing.T) {
	sums := []load.Summary{
		sum(load.ModeSyscall, nil, 1000, 0),
		sum(load.ModeGoroutine, nil, 300, 0),
		sum(load.ModeFutex, nil, 24000, 1.5),
		sum(load.ModeFutex, []int{0}, 6000, 2),
		sum(load.ModeFutex, []int{0, 1}, 30000, 1.5),
	}
	want := []string{
		"- pinning both futex sides to one CPU made a round trip 4.0× faster (24,000 → 6,000 ns)",
		"- with one futex side on each of two CPUs a round trip was 5.0× slower than on one CPU (30,000 vs 6,000 ns)",
		"- a goroutine hand-off round trip is 80× cheaper than an OS thread round trip over futex, unpinned (300 vs 24,000 ns)",
		"- and 20× cheaper than the cheapest thread round trip, futex on one CPU (6,000 ns)",
		"- a system call took 1,000 ns, with 0.0000 switches each; a futex switch on one CPU costs 3 system calls",
	}
	if diff := cmp.Diff(want, Conclusions(sums)); diff != "" {
		t.Errorf("Conclusions (-want +got):\n%s", diff)
	}
}
