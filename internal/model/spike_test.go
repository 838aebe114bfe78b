package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// feed is a detector and a clock a second per observation, on cpus CPUs.
type feed struct {
	d    *SpikeDetector
	at   time.Time
	cpus int
}

func newFeed(window time.Duration, cpus int) *feed {
	return &feed{d: NewSpikeDetector(window), at: t0, cpus: cpus}
}

func (f *feed) obs(cs float64) Spike {
	f.at = f.at.Add(time.Second)
	return f.d.Observe(f.at, cs, f.cpus)
}

// noisy feeds n rates of level ±noise (a fraction) from a fixed seed and
// returns the spikes among them.
func (f *feed) noisy(n int, level, noise float64, rng *rand.Rand) []Spike {
	var out []Spike
	for range n {
		if s := f.obs(level * (1 + noise*(2*rng.Float64()-1))); s.Active {
			out = append(out, s)
		}
	}
	return out
}

func TestSpikeNeedsHistory(t *testing.T) {
	f := newFeed(5*time.Minute, 2)
	for i := range spikeMinHistory {
		// 1,000 then a hundred times that: no baseline yet, no judgement.
		cs := 1000.0
		if i == spikeMinHistory-1 {
			cs = 100_000
		}
		if s := f.obs(cs); s != (Spike{}) {
			t.Errorf("observation %d of %v judged with %d before it: %+v", i+1, cs, i, s)
		}
	}
	if s := f.obs(1000); s.Active || s.Baseline != 1000 {
		t.Errorf("with %d observations, want the baseline 1,000 and no spike: %+v", spikeMinHistory, s)
	}
}

func TestQuietBoxIsNoSpike(t *testing.T) {
	f := newFeed(5*time.Minute, 2)
	f.noisy(60, 30, 0.1, rand.New(rand.NewPCG(1, 1)))
	if s := f.obs(400); s.Active {
		t.Errorf("30 -> 400 cs/s on an idle box called a spike: %+v", s)
	}
	// Under the floor of 5,000 a CPU even a big jump is quiet life...
	if s := f.obs(9_999); s.Active {
		t.Errorf("9,999 cs/s on 2 CPUs called a spike: %+v", s)
	}
	// ...and at it, a jump of this size is one.
	if s := f.obs(10_000); !s.Active {
		t.Errorf("30 -> 10,000 cs/s on 2 CPUs is not a spike: %+v", s)
	}
}

func TestJumpFromAnIdleBaseline(t *testing.T) {
	f := newFeed(5*time.Minute, 2)
	if got := f.noisy(120, 1000, 0.05, rand.New(rand.NewPCG(2, 2))); len(got) > 0 {
		t.Fatalf("spikes in a steady 1,000 cs/s: %+v", got)
	}
	if s := f.obs(20_000); !s.Active || math.Abs(s.Baseline-1000) > 50 {
		t.Errorf("1k -> 20k on an idle box: %+v", s)
	}
}

func TestSpikeReason(t *testing.T) {
	f := newFeed(5*time.Minute, 2)
	for range 20 {
		f.obs(60_000)
	}
	want := Spike{Active: true, Baseline: 60_000, Factor: 3, Window: 5 * time.Minute}
	if diff := cmp.Diff(want, f.obs(180_000)); diff != "" {
		t.Errorf("spike (-want +got):\n%s", diff)
	}
	if got := f.obs(137_700_000).Factor; got != 2295 {
		t.Errorf("factor of a storm: %v, want 2295", got)
	}
}

// A busy host's level is its baseline: steady 500,000 cs/s on 2 CPUs,
// 250,000 a CPU and 25 times the old fixed level, is never a spike.
func TestSteadyBusyHostIsNoSpike(t *testing.T) {
	f := newFeed(5*time.Minute, 2)
	if got := f.noisy(600, 500_000, 0.05, rand.New(rand.NewPCG(3, 3))); len(got) > 0 {
		t.Errorf("%d spikes in 10 minutes of a steady 500,000 cs/s, the first %+v", len(got), got[0])
	}
}

// With no spread the minimum jump decides: wiggles are not spikes, a
// doubling is.
func TestFlatSeriesNeedsTheMinimumJump(t *testing.T) {
	f := newFeed(5*time.Minute, 2)
	for range 30 {
		f.obs(100_000)
	}
	for _, tc := range []struct {
		cs    float64
		spike bool
	}{{100_500, false}, {150_000, false}, {199_999, false}, {200_000, true}} {
		if s := f.obs(tc.cs); s.Active != tc.spike {
			t.Errorf("100,000 flat -> %v: spike %v, want %v (%+v)", tc.cs, s.Active, tc.spike, s)
		}
	}
}

// A host whose rate swings widely needs a jump beyond its swings.
func TestWideSpreadNeedsABiggerJump(t *testing.T) {
	f := newFeed(5*time.Minute, 2)
	// 100,000 ±80%: median ≈ 100,000, MAD ≈ 40,000, so 3 scaled MADs put
	// the line near 278,000, above the minimum jump's 200,000.
	if got := f.noisy(200, 100_000, 0.8, rand.New(rand.NewPCG(4, 4))); len(got) > 0 {
		t.Fatalf("spikes within the usual swings: %+v", got)
	}
	if s := f.obs(250_000); s.Active {
		t.Errorf("2.5× the median within 3 scaled MADs called a spike: %+v", s)
	}
	if s := f.obs(300_000); !s.Active {
		t.Errorf("3×, beyond 3 scaled MADs, is not a spike: %+v", s)
	}
}

// Spikes join the window: a 5 s burst cannot move a 5-minute median, so it
// is a spike for all its 5 s; a level that holds more than half the window
// becomes the baseline.
func TestBurstStaysASpikeAndALevelBecomesTheBaseline(t *testing.T) {
	f := newFeed(5*time.Minute, 2)
	rng := rand.New(rand.NewPCG(5, 5))
	f.noisy(120, 120_000, 0.05, rng)
	if got := f.noisy(5, 360_000, 0.05, rng); len(got) != 5 {
		t.Errorf("a 5 s burst of 3× made %d spikes, want 5", len(got))
	}
	if got := f.noisy(120, 120_000, 0.05, rng); len(got) > 0 {
		t.Errorf("spikes after the burst: %+v", got)
	}
	// 240 s of history at 120,000; 400,000 from now on. It stops being a
	// spike once it holds half the 5-minute window.
	var last int
	for i := range 300 {
		if f.obs(400_000).Active {
			last = i
		}
	}
	if last < 100 || last > 160 {
		t.Errorf("a new level was a spike until its %dth second, want until about half the window", last+1)
	}
}

func TestSpikeIgnoresJunk(t *testing.T) {
	f := newFeed(time.Minute, 2)
	for range 20 {
		f.obs(50_000)
	}
	for _, junk := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -5} {
		if s := f.obs(junk); s != (Spike{}) {
			t.Errorf("Observe(%v) = %+v", junk, s)
		}
	}
	if diff := cmp.Diff(slices.Repeat([]float64{50_000}, 20), f.d.sorted); diff != "" {
		t.Errorf("window after junk (-want +got):\n%s", diff)
	}
	if s := f.obs(150_000); !s.Active || s.Baseline != 50_000 {
		t.Errorf("3× the baseline after junk: %+v", s)
	}
}

func TestSpikeWindowEviction(t *testing.T) {
	f := newFeed(time.Minute, 2)
	for i := range 90 {
		f.obs(float64(1000 + i))
	}
	// At 90 s a one-minute window holds 30..90 s (one exactly a minute
	// old still counts), rates 1,029 to 1,089.
	if diff := cmp.Diff(61, len(f.d.rates)); diff != "" {
		t.Errorf("observations kept (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(f.d.rates, f.d.sorted); diff != "" {
		t.Errorf("sorted window differs from the arrival window (-arrival +sorted):\n%s", diff)
	}
	// At 91 s the one of 30 s is gone: 1,030 to 1,089.
	if s := f.obs(1000); s.Baseline != 1059.5 {
		t.Errorf("baseline %v, want the median of the last minute, 1,059.5", s.Baseline)
	}
	// After a gap longer than the window there is no history: no baseline,
	// no spike, whatever the level.
	f.at = f.at.Add(2 * time.Minute)
	if s := f.obs(1e6); s != (Spike{}) {
		t.Errorf("judged against history older than the window: %+v", s)
	}
	if diff := cmp.Diff([]float64{1e6}, f.d.sorted); diff != "" {
		t.Errorf("window after the gap (-want +got):\n%s", diff)
	}
}

func TestMADMatchesTheDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for n := 1; n < 60; n++ {
		xs := make([]float64, n)
		for i := range xs {
			// Few distinct values, so ties and a median equal to
			// many points occur.
			xs[i] = float64(rng.IntN(8)) * 1000
		}
		slices.Sort(xs)
		med := median(xs)
		dev := make([]float64, n)
		for i, x := range xs {
			dev[i] = math.Abs(x - med)
		}
		slices.Sort(dev)
		if got, want := mad(xs, med), median(dev); got != want {
			t.Errorf("mad(%v) = %v, want %v", xs, got, want)
		}
	}
}

// BenchmarkSpikeObserve is one observation against a full 5-minute window
// at 1 s: what every refresh and every replayed sample costs.
func BenchmarkSpikeObserve(b *testing.B) {
	f := newFeed(5*time.Minute, 2)
	rng := rand.New(rand.NewPCG(7, 7))
	f.noisy(400, 120_000, 0.05, rng)
	b.ReportAllocs()
	for b.Loop() {
		f.obs(120_000 * (1 + 0.05*(2*rng.Float64()-1)))
	}
}

func TestSpikeRuns(t *testing.T) {
	for _, tc := range []struct {
		marks string
		want  []SpikeRun
	}{
		{"", nil},
		{"....", nil},
		{"S", []SpikeRun{{0, 0}}},
		{"SS..S.SSS", []SpikeRun{{0, 1}, {4, 4}, {6, 8}}},
		{".SSS.", []SpikeRun{{1, 3}}},
	} {
		got := SpikeRuns(len(tc.marks), func(i int) bool { return tc.marks[i] == 'S' })
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q (-want +got)\n%s", tc.marks, diff)
		}
	}
}
