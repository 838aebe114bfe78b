package bench

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ctxtop/ctxtop/internal/format"
)

var thousands = format.Thousands

// table is one experiment as text and markdown both show it.
type table struct {
	title  string
	note   string // how to read the figures
	header []string
	rows   [][]string
	// whyHeader and whyRows are the second table of an experiment: the
	// rescheduling IPIs, migrations and hardware counters per round trip
	// that explain the first, apart so that each fits 80 columns.
	whyHeader   []string
	whyRows     [][]string
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
			if len(c.Runs) > 0 && c.Experiment == e {
				group = append(group, c)
			}
		}
		if len(group) == 0 {
			continue // interrupted before any of its runs finished
		}
		note := runsLabel(group) + "; figures: the median run, range: the runs'"
		if single(group) {
			note = runsLabel(group)
		}
		t := table{title: strings.ToUpper(string(e[:1])) + string(e[1:]), note: note}
		switch e {
		case NoSwitch:
			t.header = []string{"mode", "pinning", "ns/trip", "range", "switches/s", "switch/trip"}
			for _, c := range group {
				m, _ := c.MedianRun()
				t.rows = append(t.rows, []string{string(c.Config.Mode), shortPinning(c.Config.CPUs),
					thousands(c.Trip().Median), c.Trip().Range(), thousands(m.SwitchesPerSecond()), fixed(m.SwitchesPerRoundTrip, 4)})
			}
		case WorkingSet:
			t.header, t.rows = workingSetTable(cells, group)
		case Pool:
			t.header, t.rows = poolTable(group)
		default:
			t.header = []string{"mode", "pinning", "ns/trip", "range", "ns/switch", "switch/trip", "vs unpinned"}
			for _, c := range group {
				ratio := "-"
				if u := find(cells, c.Config.Mode, 0); u != nil && u.Trip().OK() && c.Trip().OK() {
					ratio = fmt.Sprintf("%.2f×", c.Trip().Median/u.Trip().Median)
				}
				m, ok := c.MedianRun()
				perSwitch := "-"
				if ok && m.NsPerSwitch > 0 {
					perSwitch = thousands(m.NsPerSwitch)
				}
				t.rows = append(t.rows, []string{string(c.Config.Mode), shortPinning(c.Config.CPUs),
					thousands(c.Trip().Median), c.Trip().Range(), perSwitch, fixed(m.SwitchesPerRoundTrip, 2), ratio})
			}
		}
		t.whyHeader, t.whyRows = whyTable(e, group)
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
		fmt.Fprint(w, wrap(t.title+":", textWidth, "", ""))
		fmt.Fprint(w, wrap("("+t.note+")", textWidth, "", " "))
		t = t.withoutEmptyColumns()
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
		if len(t.whyRows) > 0 {
			why := table{header: t.whyHeader, rows: t.whyRows}.withoutEmptyColumns()
			fmt.Fprintln(w)
			writeColumns(w, why.header, why.rows)
		}
		if len(t.conclusions) > 0 {
			fmt.Fprintln(w)
		}
		for _, l := range t.conclusions {
			fmt.Fprint(w, wrap(l, textWidth, "- ", "  "))
		}
	}
}

// writeColumns prints a header and rows aligned: names left, figures right.
func writeColumns(w io.Writer, header []string, rows [][]string) {
	width := make([]int, len(header))
	for _, r := range append([][]string{header}, rows...) {
		for j, v := range r {
			width[j] = max(width[j], utf8.RuneCountInString(v))
		}
	}
	for _, r := range append([][]string{header}, rows...) {
		var b strings.Builder
		for j, v := range r {
			pad := strings.Repeat(" ", width[j]-utf8.RuneCountInString(v))
			if j > 0 {
				b.WriteString("  ")
			}
			if j < 2 {
				b.WriteString(v + pad)
			} else {
				b.WriteString(pad + v)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// withoutEmptyColumns drops the figure columns no row has a value for
// ("-" everywhere: nothing was measured), so the terminal table keeps to
// what was; a column that says n/a, a counter this machine lacks, stays, and
// a conclusion says why. The markdown keeps every column.
func (t table) withoutEmptyColumns() table {
	keep := make([]bool, len(t.header))
	for j := range t.header {
		keep[j] = j < 2
		for _, r := range t.rows {
			if j < len(r) && r[j] != "-" {
				keep[j] = true
			}
		}
	}
	pick := func(r []string) []string {
		var out []string
		for j, v := range r {
			if j < len(keep) && keep[j] {
				out = append(out, v)
			}
		}
		return out
	}
	out := t
	out.header = pick(t.header)
	out.rows = nil
	for _, r := range t.rows {
		out.rows = append(out.rows, pick(r))
	}
	return out
}

// textWidth is where conclusions wrap: the 80 columns of a terminal over SSH.
const textWidth = 80

// wrap breaks s at spaces into lines of at most width cells, the first
// led by lead and the later ones by indent; a word longer than a line
// stays whole.
func wrap(s string, width int, lead, indent string) string {
	var b strings.Builder
	b.WriteString(lead)
	line := utf8.RuneCountInString(lead)
	for i, word := range strings.Fields(s) {
		n := utf8.RuneCountInString(word)
		switch {
		case i == 0:
		case line+1+n > width:
			b.WriteString("\n" + indent)
			line = utf8.RuneCountInString(indent)
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(word)
		line += n
	}
	b.WriteByte('\n')
	return b.String()
}

// shortPinning names a pinning in a table column: unpinned, CPU 0, CPUs 0,1.
func shortPinning(cpus []int) string {
	switch len(cpus) {
	case 0:
		return "unpinned"
	case 1:
		return fmt.Sprintf("CPU %d", cpus[0])
	}
	return fmt.Sprintf("CPUs %d,%d", cpus[0], cpus[1])
}

// WriteMarkdown prints each experiment as a heading, a table to paste into
// a ticket or a slide, and its conclusions as a list.
func WriteMarkdown(w io.Writer, cells []*Cell) {
	for i, t := range tables(cells) {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "### %s\n\n%s.\n\n", mdEscape(t.title), mdEscape(strings.ToUpper(t.note[:1])+t.note[1:]))
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
		if len(t.whyRows) > 0 {
			fmt.Fprintln(w)
			writeMarkdownTable(w, t.whyHeader, t.whyRows)
		}
		if len(t.conclusions) > 0 {
			fmt.Fprintln(w)
		}
		for _, l := range t.conclusions {
			fmt.Fprintln(w, "- "+mdEscape(l))
		}
	}
}

// writeMarkdownTable prints a header and rows as a markdown table.
func writeMarkdownTable(w io.Writer, header []string, rows [][]string) {
	fmt.Fprintln(w, "| "+strings.Join(header, " | ")+" |")
	align := make([]string, len(header))
	for j := range align {
		align[j] = "---:"
		if j < 2 {
			align[j] = "---"
		}
	}
	fmt.Fprintln(w, "|"+strings.Join(align, "|")+"|")
	for _, r := range rows {
		esc := make([]string, len(r))
		for j, v := range r {
			esc[j] = mdEscape(v)
		}
		fmt.Fprintln(w, "| "+strings.Join(esc, " | ")+" |")
	}
}

// mdEscape keeps a cell's text from breaking the table or turning into
// markup.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`").Replace(s)
}
