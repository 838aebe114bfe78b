package bench

import (
	"fmt"
	"io"

	"github.com/ctxtop/ctxtop/internal/load"
	"github.com/ctxtop/ctxtop/internal/model"
)

var thousands = model.Thousands

// WriteText prints the table, then the conclusions.
func WriteText(w io.Writer, sums []load.Summary) {
	fmt.Fprintf(w, "%-10s %-16s %10s %10s %14s %12s\n", "mode", "pinning", "ns/trip", "ns/switch", "switches/trip", "vs unpinned")
	for _, s := range sums {
		nsSwitch := "-"
		if s.SwitchesPerRoundTrip >= 0.5 {
			nsSwitch = thousands(s.NsPerSwitch)
		}
		ratio := "-"
		if u, ok := findRun(sums, s.Mode, 0); ok && u.NsPerRoundTrip > 0 && s.NsPerRoundTrip > 0 {
			ratio = fmt.Sprintf("%.2f×", s.NsPerRoundTrip/u.NsPerRoundTrip)
		}
		fmt.Fprintf(w, "%-10s %-16s %10s %10s %14.2f %12s\n", s.Mode, load.Pinning(s.CPUs), thousands(s.NsPerRoundTrip), nsSwitch, s.SwitchesPerRoundTrip, ratio)
	}
	lines := Conclusions(sums)
	if len(lines) > 0 {
		fmt.Fprintln(w)
	}
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// findRun is the run of mode with ncpus CPUs pinned.
func findRun(sums []load.Summary, mode load.Mode, ncpus int) (load.Summary, bool) {
	for _, s := range sums {
		if s.Mode == mode && len(s.CPUs) == ncpus && s.RoundTrips > 0 {
			return s, true
		}
	}
	return load.Summary{}, false
}

// Conclusions are sentences computed from the figures, in the words of the
// classic experiments; a comparison whose runs are missing is left out.
func Conclusions(sums []load.Summary) []string {
	var out []string
	for _, m := range []load.Mode{load.ModeFutex, load.ModePipe, load.ModeProcess} {
		u, ok1 := findRun(sums, m, 0)
		one, ok2 := findRun(sums, m, 1)
		if ok1 && ok2 {
			out = append(out, fmt.Sprintf("- pinning both %s sides to one CPU made a round trip %s (%s → %s ns)",
				m, faster(u.NsPerRoundTrip, one.NsPerRoundTrip), thousands(u.NsPerRoundTrip), thousands(one.NsPerRoundTrip)))
		}
		two, ok3 := findRun(sums, m, 2)
		if ok2 && ok3 {
			out = append(out, fmt.Sprintf("- with one %s side on each of two CPUs a round trip was %s than on one CPU (%s vs %s ns)",
				m, slower(one.NsPerRoundTrip, two.NsPerRoundTrip), thousands(two.NsPerRoundTrip), thousands(one.NsPerRoundTrip)))
		}
	}
	if g, ok := findRun(sums, load.ModeGoroutine, 0); ok {
		if f, ok := findRun(sums, load.ModeFutex, 0); ok {
			out = append(out, fmt.Sprintf("- a goroutine hand-off round trip is %s than an OS thread round trip over futex, unpinned (%s vs %s ns)",
				cheaper(f.NsPerRoundTrip, g.NsPerRoundTrip), thousands(g.NsPerRoundTrip), thousands(f.NsPerRoundTrip)))
		}
		if f, ok := findRun(sums, load.ModeFutex, 1); ok {
			out = append(out, fmt.Sprintf("- and %s than the cheapest thread round trip, futex on one CPU (%s ns)",
				cheaper(f.NsPerRoundTrip, g.NsPerRoundTrip), thousands(f.NsPerRoundTrip)))
		}
	}
	p, ok1 := findRun(sums, load.ModeProcess, 1)
	t, ok2 := findRun(sums, load.ModePipe, 1)
	if ok1 && ok2 && p.NsPerSwitch > 0 && t.NsPerSwitch > 0 {
		out = append(out, fmt.Sprintf("- on one CPU a switch between processes cost %.1f× one between threads (%s vs %s ns per switch)",
			p.NsPerSwitch/t.NsPerSwitch, thousands(p.NsPerSwitch), thousands(t.NsPerSwitch)))
	}
	if sc, ok := findRun(sums, load.ModeSyscall, 0); ok {
		if f, ok := findRun(sums, load.ModeFutex, 1); ok && f.NsPerSwitch > 0 && sc.NsPerRoundTrip > 0 {
			out = append(out, fmt.Sprintf("- a system call took %s ns, with %.4f switches each; a futex switch on one CPU costs %.0f system calls",
				thousands(sc.NsPerRoundTrip), sc.SwitchesPerRoundTrip, f.NsPerSwitch/sc.NsPerRoundTrip))
		}
	}
	return out
}

func faster(before, after float64) string {
	if after <= 0 || before <= 0 {
		return "-"
	}
	if after <= before {
		return fmt.Sprintf("%.1f× faster", before/after)
	}
	return fmt.Sprintf("%.1f× slower", after/before)
}

func slower(base, v float64) string {
	if base <= 0 || v <= 0 {
		return "-"
	}
	if v >= base {
		return fmt.Sprintf("%.1f× slower", v/base)
	}
	return fmt.Sprintf("%.1f× faster", base/v)
}

func cheaper(dear, cheap float64) string {
	if dear <= 0 || cheap <= 0 {
		return "-"
	}
	if cheap <= dear {
		return fmt.Sprintf("%.0f× cheaper", dear/cheap)
	}
	return fmt.Sprintf("%.1f× dearer", cheap/dear)
}
