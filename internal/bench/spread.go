package bench

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/ctxtop/ctxtop/internal/load"
	"github.com/ctxtop/ctxtop/internal/sorts"
)

// Spread is a figure over a cell's runs: the median (the lower middle of
// an even count), and the range the runs covered.
type Spread struct {
	Median, Min, Max float64
	N                int // runs that gave the figure
}

// spreadOf is the spread of vals; NaN figures (a run where the figure does
// not apply) are left out.
func spreadOf(vals []float64) Spread {
	v := make([]float64, 0, len(vals))
	for _, x := range vals {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return Spread{Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	}
	slices.Sort(v)
	// The lower middle for an even count: always a run's own figure, so
	// the table's columns can all come from that one run.
	return Spread{Median: v[(len(v)-1)/2], Min: v[0], Max: v[len(v)-1], N: len(v)}
}

// OK says the figure was measured at all.
func (s Spread) OK() bool { return s.N > 0 }

// Range is "min–max", or the one value when the runs agree or there was one.
func (s Spread) Range() string {
	if !s.OK() {
		return "-"
	}
	if thousands(s.Min) == thousands(s.Max) {
		return thousands(s.Min)
	}
	return thousands(s.Min) + "–" + thousands(s.Max)
}

// Apart says the two spreads do not overlap: every run of one was below
// every run of the other. A difference is only stated when it holds.
func Apart(a, b Spread) bool {
	return a.OK() && b.OK() && (a.Max < b.Min || b.Max < a.Min)
}

func (c *Cell) figure(f func(load.Summary) (float64, bool)) Spread {
	var v []float64
	for _, s := range c.Runs {
		if s.RoundTrips == 0 {
			continue
		}
		if x, ok := f(s); ok {
			v = append(v, x)
		}
	}
	return spreadOf(v)
}

// Trip is ns per round trip over the runs.
func (c *Cell) Trip() Spread {
	return c.figure(func(s load.Summary) (float64, bool) { return s.NsPerRoundTrip, s.NsPerRoundTrip > 0 })
}

// Switch is ns per kernel-counted switch, over the runs where it applies.
func (c *Cell) Switch() Spread {
	return c.figure(func(s load.Summary) (float64, bool) { return s.NsPerSwitch, s.NsPerSwitch > 0 })
}

// SwitchesPerTrip is the kernel-counted switches per round trip.
func (c *Cell) SwitchesPerTrip() Spread {
	return c.figure(func(s load.Summary) (float64, bool) { return s.SwitchesPerRoundTrip, true })
}

// SwitchesPerSecond is the kernel-counted switch rate.
func (c *Cell) SwitchesPerSecond() Spread {
	return c.figure(func(s load.Summary) (float64, bool) { return s.SwitchesPerSecond(), true })
}

// MedianRun is the run whose ns per round trip is the median; the table
// shows its switches per round trip and ns per switch beside that figure,
// so they come from one run and agree with each other (a median of ns per
// switch over runs can exceed the median round trip).
func (c *Cell) MedianRun() (load.Summary, bool) {
	var ok []load.Summary
	for _, s := range c.Runs {
		if s.RoundTrips > 0 && s.NsPerRoundTrip > 0 {
			ok = append(ok, s)
		}
	}
	if len(ok) == 0 {
		return load.Summary{}, false
	}
	sorts.StableFunc(ok, func(a, b load.Summary) int { return cmp.Compare(a.NsPerRoundTrip, b.NsPerRoundTrip) })
	return ok[(len(ok)-1)/2], true
}

// Label is the cell's row name, "futex, unpinned".
func (c *Cell) Label() string {
	switch {
	case c.Config.Mode.Info().Threaded:
		return fmt.Sprintf("%s, %d threads", c.Config.Mode, c.Config.Threads)
	case c.Experiment == WorkingSet:
		return fmt.Sprintf("%s, %s, working set %s", c.Config.Mode, load.Pinning(c.Config.CPUs), load.FormatSize(c.Config.WorkingSet))
	}
	return fmt.Sprintf("%s, %s", c.Config.Mode, load.Pinning(c.Config.CPUs))
}
