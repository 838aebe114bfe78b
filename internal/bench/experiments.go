package bench

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/ctxtop/ctxtop/internal/load"
)

// The experiments beyond the ping-pong matrix.
const (
	// WorkingSet: each side walks its own memory every round trip, both
	// sides on one CPU, so each switch finds the caches full of the other
	// side's lines (lmbench lat_ctx -s).
	WorkingSet Experiment = "indirect cost: each side walks a working set every round trip, both on one CPU"
	// Pool: CPU-bound threads doing fixed work items, 1 to 8 per CPU.
	Pool Experiment = "a CPU-bound thread pool sized to and past the CPUs"
)

// PlanWorkingSet is the working-set axis: every walking mode among modes
// at every size, both sides on the first allowed CPU.
func PlanWorkingSet(modes []load.Mode, sizes []int64, allowed []int, d time.Duration) []*Cell {
	var plan []*Cell
	var cpus []int
	if len(allowed) > 0 {
		cpus = []int{allowed[0]}
	}
	for _, m := range modes {
		if !m.Info().Walks {
			continue
		}
		for _, ws := range sizes {
			plan = append(plan, &Cell{Experiment: WorkingSet, Config: load.Config{Mode: m, CPUs: cpus, WorkingSet: ws, Duration: d}})
		}
	}
	return plan
}

// PoolSizes are the pool's thread counts: 1, the CPUs, twice and eight
// times as many.
func PoolSizes(cpus int) []int {
	cpus = max(cpus, 1)
	var out []int
	for _, n := range []int{1, cpus, 2 * cpus, 8 * cpus} {
		if n <= load.MaxThreads && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// PlanPool is the pool experiment on this many CPUs: threaded mode m
// (pool) at each of PoolSizes.
func PlanPool(m load.Mode, cpus int, d time.Duration) []*Cell {
	var plan []*Cell
	for _, n := range PoolSizes(cpus) {
		plan = append(plan, &Cell{Experiment: Pool, Config: load.Config{Mode: m, Threads: n, Duration: d}})
	}
	return plan
}

// any is a figure over every run, pool runs included (figure skips runs
// without round trips).
func (c *Cell) any(f func(load.Summary) (float64, bool)) Spread {
	var v []float64
	for _, s := range c.Runs {
		if x, ok := f(s); ok {
			v = append(v, x)
		}
	}
	return spreadOf(v)
}

// IPIs is the wake-up IPIs (rescheduling and function-call) per round
// trip (work item, wake-up).
func (c *Cell) IPIs() Spread {
	return c.any(func(s load.Summary) (float64, bool) {
		if s.WakeupIPIsPerRoundTrip == nil {
			return 0, false
		}
		return *s.WakeupIPIsPerRoundTrip, true
	})
}

// Migrations is CPU migrations per round trip (work item, wake-up).
func (c *Cell) Migrations() Spread {
	return c.any(func(s load.Summary) (float64, bool) {
		if s.MigrationsPerRoundTrip == nil {
			return 0, false
		}
		return *s.MigrationsPerRoundTrip, true
	})
}

// Net is ns per round trip net of the working-set walks.
func (c *Cell) Net() Spread {
	return c.figure(func(s load.Summary) (float64, bool) {
		if s.WorkingSet == 0 {
			return s.NsPerRoundTrip, s.NsPerRoundTrip > 0
		}
		return s.NsPerRoundTripNet, s.WalkNsPerRoundTrip > 0
	})
}

// Walk is both sides' walk time per round trip with no switch.
func (c *Cell) Walk() Spread {
	return c.figure(func(s load.Summary) (float64, bool) { return s.WalkNsPerRoundTrip, true })
}

// Items is a pool's work items per second.
func (c *Cell) Items() Spread {
	return c.any(func(s load.Summary) (float64, bool) { return s.ItemsPerSec, s.Items > 0 })
}

// Involuntary is a pool's involuntary switches per second.
func (c *Cell) Involuntary() Spread {
	return c.any(func(s load.Summary) (float64, bool) { return s.InvoluntaryPerSec, s.DurationS > 0 })
}

// RunQueueWait is the share of a pool's time spent waiting for a CPU.
func (c *Cell) RunQueueWait() Spread {
	return c.any(func(s load.Summary) (float64, bool) {
		if s.RunQueueWaitShare == nil {
			return 0, false
		}
		return *s.RunQueueWaitShare, true
	})
}

// hw is the runs' median hardware counters per round trip: instructions,
// cycles and cache misses, or n/a.
func (c *Cell) hw() [3]string {
	var v [3][]float64
	for _, s := range c.Runs {
		if s.HW != nil {
			v[0] = append(v[0], s.HW.InstructionsPerRoundTrip)
			v[1] = append(v[1], s.HW.CyclesPerRoundTrip)
			v[2] = append(v[2], s.HW.CacheMissesPerRoundTrip)
		}
	}
	if len(v[0]) == 0 {
		return [3]string{"n/a", "n/a", "n/a"}
	}
	return [3]string{thousands(spreadOf(v[0]).Median), thousands(spreadOf(v[1]).Median), fixed(spreadOf(v[2]).Median, 1)}
}

// hwNote is the one line saying why the hardware columns are n/a, for the
// first experiment in the plan; "" when they are not, or for the others.
func hwNote(cells []*Cell, e Experiment) string {
	if len(cells) == 0 || cells[0].Experiment != e {
		return ""
	}
	for _, c := range cells {
		for _, s := range c.Runs {
			if s.HW != nil {
				return ""
			}
		}
	}
	for _, c := range cells {
		for _, s := range c.Runs {
			if s.HWNote != "" {
				return "hardware counters (instructions, cycles, cache misses per round trip): n/a: " + s.HWNote
			}
		}
	}
	return ""
}

// whyTable is an experiment's second table: per round trip (work item),
// the rescheduling IPIs, migrations and hardware counters of each cell.
func whyTable(e Experiment, group []*Cell) ([]string, [][]string) {
	unit := "trip"
	first := []string{"mode", "pinning"}
	switch e {
	case WorkingSet:
		first[1] = "working set"
	case Pool:
		unit, first = "item", []string{"threads", "work"}
	}
	header := append(first, "IPIs/"+unit, "migr/"+unit, "instr/"+unit, "cycles/"+unit, "misses/"+unit)
	var rows [][]string
	for _, c := range group {
		name := []string{string(c.Config.Mode), shortPinning(c.Config.CPUs)}
		switch e {
		case WorkingSet:
			name[1] = load.FormatSize(c.Config.WorkingSet)
		case Pool:
			work := c.Config.Work
			if work == 0 {
				work = load.DefaultWork
			}
			name = []string{strconv.Itoa(c.Config.Threads), work.String()}
		}
		hw := c.hw()
		rows = append(rows, append(name, fixed(c.IPIs().Median, 2), fixed(c.Migrations().Median, 3), hw[0], hw[1], hw[2]))
	}
	return header, rows
}

// workingSetTable is the working-set experiment's rows: the round trip,
// the walks alone, the round trip net of them, and the indirect cost: the
// net figure less the same mode's with no working set.
func workingSetTable(cells []*Cell, group []*Cell) ([]string, [][]string) {
	header := []string{"mode", "working set", "ns/trip", "range", "walks ns", "net ns/trip", "indirect ns", "switch/trip"}
	var rows [][]string
	for _, c := range group {
		indirect := "-"
		if z := findWS(cells, c.Config.Mode, 0); z != nil && c.Net().OK() && z.Net().OK() && c.Config.WorkingSet > 0 {
			indirect = thousands(c.Net().Median - z.Net().Median)
		}
		walk := "-"
		if c.Config.WorkingSet > 0 {
			walk = thousands(c.Walk().Median)
		}
		rows = append(rows, []string{string(c.Config.Mode), load.FormatSize(c.Config.WorkingSet),
			thousands(c.Trip().Median), c.Trip().Range(), walk, thousands(c.Net().Median), indirect, fixed(c.SwitchesPerTrip().Median, 2)})
	}
	return header, rows
}

// findWS is the working-set cell of mode at size.
func findWS(cells []*Cell, m load.Mode, size int64) *Cell {
	for _, c := range cells {
		if c.Experiment == WorkingSet && c.Config.Mode == m && c.Config.WorkingSet == size && c.Trip().OK() {
			return c
		}
	}
	return nil
}

// poolTable is the pool experiment's rows.
func poolTable(group []*Cell) ([]string, [][]string) {
	header := []string{"threads", "items/s", "range", "per thread", "involuntary/s", "run-queue wait"}
	var rows [][]string
	for _, c := range group {
		it := c.Items()
		per := "-"
		if it.OK() {
			per = thousands(it.Median / float64(c.Config.Threads))
		}
		wait := "-"
		if w := c.RunQueueWait(); w.OK() {
			wait = fmt.Sprintf("%.0f%%", 100*w.Median)
		}
		rows = append(rows, []string{strconv.Itoa(c.Config.Threads), thousands(it.Median), it.Range(), per,
			thousands(c.Involuntary().Median), wait})
	}
	return header, rows
}

// findPool is the pool cell with n threads.
func findPool(cells []*Cell, n int) *Cell {
	for _, c := range cells {
		if c.Experiment == Pool && c.Config.Threads == n && c.Items().OK() {
			return c
		}
	}
	return nil
}

// poolConclusions compare the pool at the CPU count with one thread and
// with more threads than CPUs.
func poolConclusions(cells []*Cell) []string {
	var out []string
	var sizes []int
	for _, c := range cells {
		if c.Experiment == Pool {
			sizes = append(sizes, c.Config.Threads)
		}
	}
	if len(sizes) < 2 {
		return nil
	}
	ncpu := sizes[min(1, len(sizes)-1)]
	base := findPool(cells, ncpu)
	if base == nil {
		return nil
	}
	if one := findPool(cells, 1); one != nil && ncpu > 1 {
		if Apart(one.Items(), base.Items()) {
			out = append(out, fmt.Sprintf("%s did %.1f× the items/s of one (median %s vs %s; runs %s vs %s)",
				threads(ncpu), base.Items().Median/one.Items().Median, thousands(base.Items().Median), thousands(one.Items().Median), base.Items().Range(), one.Items().Range()))
		} else {
			out = append(out, fmt.Sprintf("%s and one thread: no clear difference in items/s (runs %s vs %s overlap): the CPUs were busy with other work",
				threads(ncpu), base.Items().Range(), one.Items().Range()))
		}
	}
	for _, n := range sizes {
		if n <= ncpu {
			continue
		}
		c := findPool(cells, n)
		if c == nil {
			continue
		}
		invol := ""
		if b, v := base.Involuntary().Median, c.Involuntary().Median; b > 0 && v > 0 {
			invol = fmt.Sprintf(", with %s the involuntary switches (%s vs %s/s)", times(v/b), thousands(v), thousands(b))
		}
		if w, bw := c.RunQueueWait(), base.RunQueueWait(); w.OK() && bw.OK() {
			invol += fmt.Sprintf(" and %.0f%% of their time waiting for a CPU instead of %.0f%%", 100*w.Median, 100*bw.Median)
		}
		if Apart(base.Items(), c.Items()) {
			d := c.Items().Median/base.Items().Median - 1
			word := "more"
			if d < 0 {
				word, d = "fewer", -d
			}
			out = append(out, fmt.Sprintf("%s on %s did %.0f%% %s items/s than %d (median %s vs %s; runs %s vs %s)%s",
				threads(n), cpusWord(ncpu), 100*d, word, ncpu, thousands(c.Items().Median), thousands(base.Items().Median), c.Items().Range(), base.Items().Range(), invol))
		} else {
			out = append(out, fmt.Sprintf("%s on %s did as many items/s as %d within the runs' spread (%s vs %s)%s: more threads than CPUs bought nothing",
				threads(n), cpusWord(ncpu), ncpu, c.Items().Range(), base.Items().Range(), invol))
		}
	}
	return out
}

func threads(n int) string {
	if n == 1 {
		return "1 thread"
	}
	return strconv.Itoa(n) + " threads"
}

func cpusWord(n int) string {
	if n == 1 {
		return "1 CPU"
	}
	return strconv.Itoa(n) + " CPUs"
}

// workingSetConclusions give each mode's indirect cost at its largest
// working set.
func workingSetConclusions(cells []*Cell) []string {
	var out []string
	for _, m := range modesWhere(func(i load.Info) bool { return i.Walks }) {
		var big *Cell
		for _, c := range cells {
			if c.Experiment == WorkingSet && c.Config.Mode == m && c.Net().OK() && (big == nil || c.Config.WorkingSet > big.Config.WorkingSet) {
				big = c
			}
		}
		zero := findWS(cells, m, 0)
		if big == nil || zero == nil || big == zero {
			continue
		}
		size := load.FormatSize(big.Config.WorkingSet)
		if !Apart(zero.Net(), big.Net()) {
			out = append(out, fmt.Sprintf("%s with %s per side: no clear indirect cost (net round trips %s vs %s ns overlap with none)",
				m, size, big.Net().Range(), zero.Net().Range()))
			continue
		}
		if big.Net().Median < zero.Net().Median {
			out = append(out, fmt.Sprintf("%s with %s per side: a round trip cost less net of the walks (%s ns) than with none (%s ns; runs %s vs %s): no indirect cost shows, the walk measured alone was the slower one",
				m, size, thousands(big.Net().Median), thousands(zero.Net().Median), big.Net().Range(), zero.Net().Range()))
			continue
		}
		out = append(out, fmt.Sprintf("%s with %s per side: a round trip cost %s ns net of the walks against %s ns with none: refilling the caches after each switch added %s ns (runs %s vs %s)",
			m, size, thousands(big.Net().Median), thousands(zero.Net().Median), thousands(big.Net().Median-zero.Net().Median), big.Net().Range(), zero.Net().Range()))
	}
	return out
}

// ipiConclusion names the cause of pinning's gain: the wake-up stops
// crossing CPUs, so no rescheduling IPI is sent.
func ipiConclusion(cells []*Cell) []string {
	var out []string
	for _, m := range switchingPairs() {
		u, one := find(cells, m, 0), find(cells, m, 1)
		if u == nil || one == nil || !u.IPIs().OK() || !one.IPIs().OK() {
			continue
		}
		a, b := u.IPIs().Median, one.IPIs().Median
		line := fmt.Sprintf("%s unpinned: %.2f wake-up IPIs (rescheduling and function-call) per round trip; pinned to one CPU: %.2f", m, a, b)
		switch {
		case a >= 0.1 && b < a/4:
			line += " — the wake-up no longer crosses CPUs"
		case a < 0.1:
			line += " — few wake-ups crossed CPUs even unpinned (the scheduler kept both sides together)"
		default:
			line += " — about as many: other work on the machine sends them too (the count is system-wide)"
		}
		if two := find(cells, m, 2); two != nil && two.IPIs().OK() {
			line += fmt.Sprintf("; one side on each of two CPUs: %.2f", two.IPIs().Median)
		}
		out = append(out, line)
		break
	}
	return out
}
