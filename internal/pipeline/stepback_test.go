package pipeline

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
)

// A host counter that steps back is a reset: no rate for that interval nor
// for the next, whatever the counter does then, and never the climb back
// to the old level as one interval's switches.
func TestHostCounterSteppingBackGivesNoRate(t *testing.T) {
	type got struct {
		CS      float64
		NoRates string
		Spike   bool
	}
	for _, c := range []struct {
		name string
		ctxt []uint64
		want []got
	}{
		{"back, then forward to where it was", []uint64{2_727_877, 10, 2_727_877, 2_728_877, 2_729_877},
			[]got{{0, model.NoRatesStepBack, false}, {0, model.NoRatesAfterStepBack, false}, {1000, "", false}, {1000, "", false}}},
		{"100, 50, 100", []uint64{100, 50, 100, 150},
			[]got{{0, model.NoRatesStepBack, false}, {0, model.NoRatesAfterStepBack, false}, {50, "", false}}},
		{"a real reset runs on from its new level", []uint64{1_000_000, 50, 60, 70},
			[]got{{0, model.NoRatesStepBack, false}, {0, model.NoRatesAfterStepBack, false}, {10, "", false}}},
		{"steady", []uint64{100, 200, 300}, []got{{100, "", false}, {100, "", false}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Unix(1_800_000_000, 0)
			samples := make([]model.Sample, len(c.ctxt))
			for i, v := range c.ctxt {
				samples[i] = model.Sample{Time: start.Add(time.Duration(i) * time.Second),
					System: model.SystemCounters{ContextSwitches: v, Interrupts: 1000 * uint64(i+1), CPUs: 2}}
			}
			var gots []got
			for i, s := range steps(t, samples, model.Options{}) {
				i++
				gots = append(gots, got{s.System.ContextSwitchesPerSec, s.System.NoRates, s.Spike.Active})
				if s.System.NoRates != "" && (s.System.InterruptsPerSec != 0 || s.System.PerCPU != nil || s.UnattributedPerSec != 0) {
					t.Errorf("interval %d has no rates (%s) but in/s %v, per-CPU %v, unattributed %v",
						i, s.System.NoRates, s.System.InterruptsPerSec, s.System.PerCPU, s.UnattributedPerSec)
				}
			}
			if diff := cmp.Diff(c.want, gots); diff != "" {
				t.Errorf("intervals (-want +got)\n%s", diff)
			}
		})
	}
}

// A /proc/stat that could not be read is no host rate for the intervals it
// ends and begins, then rates resume.
func TestUnreadHostCountersGiveNoRate(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	sys := []model.SystemCounters{{ContextSwitches: 100}, {Unread: "stat: malformed"}, {ContextSwitches: 300}, {ContextSwitches: 400}}
	var samples []model.Sample
	for i := range sys {
		samples = append(samples, model.Sample{Time: start.Add(time.Duration(i) * time.Second), System: sys[i]})
	}
	var got []string
	for _, s := range steps(t, samples, model.Options{}) {
		got = append(got, s.System.NoRates)
	}
	want := []string{"stat: malformed", "the read that began the interval failed: stat: malformed", ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NoRates (-want +got)\n%s", diff)
	}
}
