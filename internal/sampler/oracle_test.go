package sampler

import (
	"context"
	"math"
	"testing"

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
