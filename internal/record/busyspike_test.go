package record

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

// A busy host's own level is not a spike; a burst of three times it is, for
// exactly as long as it lasts. The made-up burst starts and ends on sample
// boundaries, so no interval holds half of it: on a real host the interval
// in which a burst begins or ends holds part of it, and may fall either
// side of the line.
func TestMarksFlagOnlyTheBurstOnABusyHost(t *testing.T) {
	s := recordtest.New(40, 5, true)
	// 60,000 switches a second per CPU on 2 CPUs, ±5%; three times that
	// over samples 40 to 44 (counting from 1), which are marks 39 to 43.
	s.BusyRate, s.BusyNoise, s.StormFactor = 120_000, 0.05, 3
	s.StormFrom, s.StormTo = 40, 45
	in := make([]model.Sample, 90)
	for i := range in {
		in[i] = s.Next()
	}
	p, _ := play(t, record(t, in, WriterOptions{}))
	var got []int
	for i, m := range p.Marks() {
		if m.Spike.Active {
			got = append(got, i)
		}
	}
	if diff := cmp.Diff([]int{39, 40, 41, 42, 43}, got); diff != "" {
		t.Errorf("marked spikes (-want +got):\n%s", diff)
	}
	// The baseline is the busy level, not the burst.
	if b := p.Marks()[43].Spike.Baseline; math.Abs(b-120_000) > 6_000 {
		t.Errorf("baseline at the burst's last sample %v, want 120,000 ±5%%", b)
	}
}
