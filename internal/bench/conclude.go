package bench

import (
	"fmt"

	"github.com/ctxtop/ctxtop/internal/load"
)

// modesWhere are the modes that have a property, in the registry's order.
func modesWhere(has func(load.Info) bool) []load.Mode {
	var out []load.Mode
	for _, i := range load.Modes() {
		if has(i) {
			out = append(out, i.Mode)
		}
	}
	return out
}

// switchingPairs are the modes whose round trip is a pair of context
// switches (futex, pipe, process): the ones pinning speaks to.
func switchingPairs() []load.Mode {
	return modesWhere(func(i load.Info) bool { return !i.NoSwitch && !i.Threaded })
}

// find is the cell of mode with ncpus CPUs pinned that has a figure.
func find(cells []*Cell, mode load.Mode, ncpus int) *Cell {
	for _, c := range cells {
		if c.Config.Mode == mode && len(c.Config.CPUs) == ncpus && c.Trip().OK() {
			return c
		}
	}
	return nil
}

// runs is the runs' range of a figure, "6,500–7,100 ns".
func runs(s Spread, unit string) string { return s.Range() + " " + unit }

// ratio words b against a: "3.6× faster" when b is smaller.
func ratio(a, b float64, less, more string) string {
	if b <= a {
		return times(a/b) + " " + less
	}
	return times(b/a) + " " + more
}

// times is a ratio with the digits that mean something: 3.6×, 80×.
func times(r float64) string {
	if r >= 10 {
		return fmt.Sprintf("%.0f×", r)
	}
	return fmt.Sprintf("%.1f×", r)
}

// compare states how much after differs from before ("subject verb 3.6×
// faster"), or, when their runs overlap, that they show no clear difference.
func compare(subject, verb string, before, after Spread, unit, less, more string) string {
	if !Apart(before, after) {
		return fmt.Sprintf("%s: no clear difference (runs %s vs %s overlap)", subject, runs(before, unit), runs(after, unit))
	}
	return fmt.Sprintf("%s %s %s (median %s → %s %s; runs %s vs %s)", subject, verb, ratio(before.Median, after.Median, less, more),
		thousands(before.Median), thousands(after.Median), unit, before.Range(), after.Range())
}

// Conclusions are sentences computed from experiment e's figures, in the
// words of the classic experiments. A difference is stated only where the
// runs of the two cells do not overlap; a comparison whose cells are
// missing is left out.
func Conclusions(cells []*Cell, e Experiment) []string {
	var out []string
	if single(cells) {
		out = append(out, "one run per cell: no spread measured, so a difference below may not repeat (--repeats 3 tests it)")
	}
	switch e {
	case Switches:
		for _, m := range switchingPairs() {
			u, one, two := find(cells, m, 0), find(cells, m, 1), find(cells, m, 2)
			if u != nil && one != nil {
				out = append(out, compare(fmt.Sprintf("pinning both %s sides to one CPU", m), "made a round trip", u.Trip(), one.Trip(), "ns", "faster", "slower"))
			}
			if one != nil && two != nil {
				out = append(out, compare(fmt.Sprintf("one %s side on each of two CPUs instead of both on one", m), "made a round trip", one.Trip(), two.Trip(), "ns", "faster", "slower"))
			}
		}
		p, t := find(cells, load.ModeProcess, 1), find(cells, load.ModePipe, 1)
		if p != nil && t != nil && p.Switch().OK() && t.Switch().OK() {
			if Apart(p.Switch(), t.Switch()) {
				out = append(out, fmt.Sprintf("on one CPU a switch between processes cost %s one between threads (median %s vs %s ns per switch; runs %s vs %s)",
					times(p.Switch().Median/t.Switch().Median), thousands(p.Switch().Median), thousands(t.Switch().Median), p.Switch().Range(), t.Switch().Range()))
			} else {
				out = append(out, fmt.Sprintf("on one CPU a switch between processes and one between threads: no clear difference (runs %s vs %s overlap)",
					runs(p.Switch(), "ns"), runs(t.Switch(), "ns")))
			}
		}
		out = append(out, ipiConclusion(cells)...)
	case WorkingSet:
		out = append(out, workingSetConclusions(cells)...)
	case Pool:
		out = append(out, poolConclusions(cells)...)
	case NoSwitch:
		g := find(cells, load.ModeGoroutine, 0)
		if g != nil {
			if f := find(cells, load.ModeFutex, 0); f != nil {
				out = append(out, compare("a goroutine hand-off round trip against a futex round trip between OS threads (unpinned)", "was", f.Trip(), g.Trip(), "ns", "cheaper", "dearer"))
			}
			if f := find(cells, load.ModeFutex, 1); f != nil {
				out = append(out, compare("against the cheapest thread round trip (futex, both on one CPU) it", "was", f.Trip(), g.Trip(), "ns", "cheaper", "dearer"))
			}
			if s := g.SwitchesPerSecond(); s.OK() {
				out = append(out, fmt.Sprintf("goroutine hand-offs never enter the kernel, yet the process's threads made %s switches/s over the runs: the Go runtime's idle Ps parking and being woken",
					s.Range()))
			}
			if one := find(cells, load.ModeGoroutine, 1); one != nil {
				out = append(out, compare("pinning the whole Go process to one CPU", "made a goroutine round trip", g.Trip(), one.Trip(), "ns", "faster", "slower"))
			}
		}
		sc, f := find(cells, load.ModeSyscall, 0), find(cells, load.ModeFutex, 1)
		if sc != nil && f != nil && f.Switch().OK() {
			if Apart(sc.Trip(), f.Switch()) {
				out = append(out, fmt.Sprintf("a system call took %s ns (runs %s), with %.4f switches each; a futex switch on one CPU cost %.0f system calls",
					thousands(sc.Trip().Median), sc.Trip().Range(), sc.SwitchesPerTrip().Median, f.Switch().Median/sc.Trip().Median))
			} else {
				out = append(out, fmt.Sprintf("a system call and a futex switch on one CPU: no clear difference (runs %s vs %s overlap)",
					runs(sc.Trip(), "ns"), runs(f.Switch(), "ns")))
			}
		}
	}
	if note := hwNote(cells, e); note != "" {
		out = append(out, note)
	}
	return out
}

// single says no cell had two runs, so there is no spread to judge by.
func single(cells []*Cell) bool {
	for _, c := range cells {
		if len(c.Runs) > 1 {
			return false
		}
	}
	return len(cells) > 0
}
