package sampler

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/load"

	"github.com/ctxtop/ctxtop/internal/model"
)

// gopsutil reads /proc/stat and /proc/loadavg its own way: as an oracle for
// the system counters, its reads taken between two of ours must fall
// between them, and its CPU count must match.
func TestSystemCountersAgainstGopsutil(t *testing.T) {
	s := newSampler(t, Config{})
	ctx := context.Background()
	var a, b model.Sample
	mustSample(t, s, &a)
	g, err := load.MiscWithContext(ctx)
	if err != nil {
		t.Fatalf("gopsutil: %v", err)
	}
	avg, err := load.AvgWithContext(ctx)
	if err != nil {
		t.Fatalf("gopsutil: %v", err)
	}
	mustSample(t, s, &b)
	if c := uint64(g.Ctxt); c < a.System.ContextSwitches || c > b.System.ContextSwitches {
		t.Errorf("gopsutil ctxt %d read between our %d and %d", c, a.System.ContextSwitches, b.System.ContextSwitches)
	}
	// loadavg has two decimals: equal to the hundredth, whichever of our
	// two reads gopsutil's fell between (the parsers round differently).
	same := func(x, y float64) bool { return math.Abs(x-y) < 0.005 }
	if la := avg.Load1; !same(la, a.System.LoadAvg[0]) && !same(la, b.System.LoadAvg[0]) {
		t.Errorf("gopsutil load1 %v, ours %v then %v", la, a.System.LoadAvg[0], b.System.LoadAvg[0])
	}
	n, err := cpu.CountsWithContext(ctx, true)
	if err != nil {
		t.Fatalf("gopsutil: %v", err)
	}
	if n != b.System.CPUs {
		t.Errorf("gopsutil counts %d CPUs, we %d", n, b.System.CPUs)
	}
}

// The cs/s the monitor reports over an interval covers at least the
// switches gopsutil counted inside that interval.
func TestContextSwitchRateAgainstGopsutil(t *testing.T) {
	mon, err := NewMonitor(Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mon.Close() })
	ctx := context.Background()
	g0, err := load.MiscWithContext(ctx)
	if err != nil {
		t.Fatalf("gopsutil: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	g1, err := load.MiscWithContext(ctx)
	if err != nil {
		t.Fatalf("gopsutil: %v", err)
	}
	snap, err := mon.Next()
	if err != nil {
		t.Fatal(err)
	}
	ours := snap.System.ContextSwitchesPerSec * snap.Interval.Seconds()
	// Rates are floats over the measured interval: allow a rounding switch.
	if theirs := float64(g1.Ctxt - g0.Ctxt); ours+0.5 < theirs {
		t.Errorf("our interval counts %.1f switches, gopsutil saw %.0f inside it", ours, theirs)
	}
	if ours <= 0 {
		t.Errorf("no switches in %v: %v cs/s", snap.Interval, snap.System.ContextSwitchesPerSec)
	}
}
