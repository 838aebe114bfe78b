package bench

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ctxtop/ctxtop/internal/load"
	"github.com/ctxtop/ctxtop/internal/model"
)

var thousands = model.Thousands

// table is one experiment as text and markdown both show it.
type table struct {
	title       string
	header      []string
	rows        [][]string
	conclusions []string
}

// tables are the experiments in the order the plan first names them.
func tables(cells []*Cell) []table {
	var order []Experiment
	seen := map[Experiment]bool{}
	for _, c := range cells {
		if !seen[c.Experiment] {
			seen[c.Experiment] = true
			order = append(order, c.Experiment)
		}
	}
	var out []table
	for _, e := range order {
		var group []*Cell
		for _, c := range cells {
			if c.Experiment == e {
				group = append(group, c)
			}
		}
		how := "; ns: the median run, then the range of the runs"
		if single(group) {
			how = ""
		}
		t := table{title: fmt.Sprintf("%s%s (%s%s)", strings.ToUpper(string(e[:1])), e[1:], runsLabel(group), how)}
		switch e {
		case NoSwitch:
			t.header = append([]string{"mode", "pinning", "ns/trip", "range", "switches/s", "switches/trip"}, ipiHeader...)
			for _, c := range group {
				t.rows = append(t.rows, append([]string{string(c.Config.Mode), load.Pinning(c.Config.CPUs),
					thousands(c.Trip().Median), c.Trip().Range(), thousands(c.SwitchesPerSecond().Median), fixed(c.SwitchesPerTrip().Median, 4)}, ipiCols(c)...))
			}
		case WorkingSet:
			t.header, t.rows = workingSetTable(cells, group)
		case Pool:
			t.header, t.rows = poolTable(group)
		default:
			t.header = append([]string{"mode", "pinning", "ns/trip", "range", "ns/switch", "switches/trip", "vs unpinned"}, ipiHeader...)
			for _, c := range group {
				ratio := "-"
				if u := find(cells, c.Config.Mode, 0); u != nil && u.Trip().OK() && c.Trip().OK() {
					ratio = fmt.Sprintf("%.2f×", c.Trip().Median/u.Trip().Median)
				}
				t.rows = append(t.rows, append([]string{string(c.Config.Mode), load.Pinning(c.Config.CPUs),
					thousands(c.Trip().Median), c.Trip().Range(), thousands(c.Switch().Median), fixed(c.SwitchesPerTrip().Median, 2), ratio}, ipiCols(c)...))
			}
		}
		t.conclusions = Conclusions(cells, e)
		out = append(out, t)
	}
	return out
}

func fixed(v float64, prec int) string {
	if v != v {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

// runsLabel says how many runs each cell had: "3 runs each".
func runsLabel(cells []*Cell) string {
	lo, hi := -1, 0
	for _, c := range cells {
		n := len(c.Runs)
		if lo < 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
	}
	switch {
	case lo == hi && hi == 1:
		return "1 run each: no spread"
	case lo == hi:
		return fmt.Sprintf("%d runs each", hi)
	}
	return fmt.Sprintf("%d–%d runs each", lo, hi)
}

// WriteText prints each experiment's table and conclusions.
func WriteText(w io.Writer, cells []*Cell) {
	for i, t := range tables(cells) {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, t.title)
		width := make([]int, len(t.header))
		for _, r := range append([][]string{t.header}, t.rows...) {
			for j, v := range r {
				width[j] = max(width[j], utf8.RuneCountInString(v))
			}
		}
		for _, r := range append([][]string{t.header}, t.rows...) {
			var b strings.Builder
			for j, v := range r {
				pad := strings.Repeat(" ", width[j]-utf8.RuneCountInString(v))
				if j > 0 {
					b.WriteString("  ")
				}
				if j < 2 { // names left, figures right
					b.WriteString(v + pad)
				} else {
					b.WriteString(pad + v)
				}
			}
			fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		}
		if len(t.conclusions) > 0 {
			fmt.Fprintln(w)
		}
		for _, l := range t.conclusions {
			fmt.Fprintln(w, "- "+l)
		}
	}
}

// WriteMarkdown prints each experiment as a heading, a table to paste into
// a ticket or a slide, and its conclusions as a list.
func WriteMarkdown(w io.Writer, cells []*Cell) {
	for i, t := range tables(cells) {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "### %s\n\n", mdEscape(t.title))
		fmt.Fprintln(w, "| "+strings.Join(t.header, " | ")+" |")
		align := make([]string, len(t.header))
		for j := range align {
			align[j] = "---:"
			if j < 2 {
				align[j] = "---"
			}
		}
		fmt.Fprintln(w, "|"+strings.Join(align, "|")+"|")
		for _, r := range t.rows {
			esc := make([]string, len(r))
			for j, v := range r {
				esc[j] = mdEscape(v)
			}
			fmt.Fprintln(w, "| "+strings.Join(esc, " | ")+" |")
		}
		if len(t.conclusions) > 0 {
			fmt.Fprintln(w)
		}
		for _, l := range t.conclusions {
			fmt.Fprintln(w, "- "+mdEscape(l))
		}
	}
}

// mdEscape keeps a cell's text from breaking the table or turning into
// markup.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`").Replace(s)
}
