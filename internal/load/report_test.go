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
		NsPerSwitch: 3333, Migrations: &migr}
	var b strings.Builder
	WriteSummary(&b, s)
	want := `
futex, both on CPU 0, 1 pair, 2.00s: 300,000 round trips
  6,667 ns per round trip
  2.00 switches per round trip (kernel-counted: 600,000 voluntary, 30 involuntary)
  3,333 ns per switch
  12 CPU migrations
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
