package load

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteSummary(t *testing.T) {
	migr := uint64(12)
	s := Summary{Mode: ModeFutex, CPUs: []int{0}, Pairs: 1, DurationS: 2, RoundTrips: 300000,
		NsPerRoundTrip: 6667, SwitchesVoluntary: 600000, SwitchesInvoluntary: 30, SwitchesPerRoundTrip: 2.0001,
		NsPerSwitch: 3333, Migrations: &migr, SwitchesCounted: CountedWorkload}
	var b strings.Builder
	WriteSummary(&b, s)
	want := `
futex, both on CPU 0, 1 pair, 2.00s: 300,000 round trips
  6,667 ns per round trip
  2.00 switches per round trip (kernel-counted: 600,000 voluntary, 30 involuntary)
  3,333 ns per switch (round trip ÷ kernel-counted switches per round trip)
  12 CPU migrations
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("WriteSummary (-want +got):\n%s", diff)
	}
}

// TestWriteSummaryGoroutine: goroutine mode's switches are the runtime's
// threads', counted over the whole process and labelled so, as a rate; no
// ns per switch where a round trip is not made of switches.
func TestWriteSummaryGoroutine(t *testing.T) {
	migr := uint64(3)
	s := Summary{Mode: ModeGoroutine, Pairs: 1, DurationS: 2, RoundTrips: 6000000,
		NsPerRoundTrip: 333, SwitchesVoluntary: 12000, SwitchesInvoluntary: 8000, SwitchesPerRoundTrip: 0.0033,
		Migrations: &migr, SwitchesCounted: CountedProcess}
	var b strings.Builder
	WriteSummary(&b, s)
	want := `
goroutine, unpinned, 1 pair, 2.00s: 6,000,000 round trips
  333 ns per round trip
  10,000 switches/s, kernel-counted over every thread of the workload process
    (12,000 voluntary, 8,000 involuntary; 0.0033 per round trip): the Go runtime's
    idle Ps parking and being woken; the hand-offs never enter the kernel
  3 CPU migrations
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("WriteSummary (-want +got):\n%s", diff)
	}
}

func TestPinning(t *testing.T) {
	for _, c := range []struct {
		cpus []int
		want string
	}{{nil, "unpinned"}, {[]int{3}, "both on CPU 3"}, {[]int{0, 1}, "CPUs 0 and 1"}} {
		if got := Pinning(c.cpus); got != c.want {
			t.Errorf("Pinning(%v) = %q, want %q", c.cpus, got, c.want)
		}
	}
}
