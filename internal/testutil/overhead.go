package testutil

import (
	"slices"
	"testing"
	"time"
)

// NsPerRoundTrip is the ns a running ping-pong takes a round trip over
// window, after settle for what was just attached or detached to take
// hold; trips reads its round trips so far. A window with none fails tb.
func NsPerRoundTrip(tb testing.TB, trips func() uint64, settle, window time.Duration) float64 {
	time.Sleep(settle)
	t0, n0 := time.Now(), trips()
	time.Sleep(window)
	t1, n1 := time.Now(), trips()
	if n1 <= n0 {
		tb.Fatalf("the ping-pong made no round trip in %v", window)
	}
	return float64(t1.Sub(t0).Nanoseconds()) / float64(n1-n0)
}

// PairedOverhead is what on() costs the ping-pong: it alternates on() and
// off() n times and sets each on window's ns a round trip against the mean
// of the off windows either side of it, so that a drift of the host's own
// speed (a VM's neighbours, a busy loop) cancels. It returns the ratios,
// sorted, and the median off window's ns a round trip.
func PairedOverhead(tb testing.TB, trips func() uint64, n int, settle, window time.Duration, on, off func()) (ratios []float64, offNs float64) {
	before := NsPerRoundTrip(tb, trips, settle, window)
	var offs []float64
	for range n {
		on()
		ns := NsPerRoundTrip(tb, trips, settle, window)
		off()
		after := NsPerRoundTrip(tb, trips, settle, window)
		ratios = append(ratios, 2*ns/(before+after))
		offs = append(offs, before)
		before = after
	}
	slices.Sort(ratios)
	slices.Sort(offs)
	return ratios, offs[len(offs)/2]
}
