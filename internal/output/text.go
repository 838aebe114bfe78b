package output

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/ctxtop/ctxtop/internal/fields"
	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// Text writes pidstat-style reports.
type Text struct {
	w    *bufio.Writer
	opts Options
	n    int
	// row is the line being built, kept across rows and reports.
	row []byte
}

// NewText returns a writer of text reports to w.
func NewText(w io.Writer, opts Options) *Text {
	return &Text{w: bufio.NewWriter(w), opts: opts}
}

const commWidth = 16

// Write prints one report: a system line, a header and the rows.
func (t *Text) Write(s *model.Snapshot) error {
	w := t.w
	if t.n > 0 {
		w.WriteByte('\n')
	}
	if t.n == 0 && t.opts.HidePID != "" {
		line(w, "%s", hidepidNote(t.opts.HidePID))
	}
	t.n++
	sys := &s.System
	cs, in, res := format.Thousands(sys.ContextSwitchesPerSec), format.Thousands(sys.InterruptsPerSec), format.Thousands(sys.ReschedIPIsPerSec)
	if sys.NoRates != "" {
		// Unknown, not a quiet host: the reason follows on the line.
		cs, in, res = "-", "-", "-"
	}
	fmt.Fprintf(w, "%s  cs/s %s  in/s %s  res/s %s  run %d  blk %d  cpus %d  load %s %s %s",
		s.Time.Format("15:04:05"), cs, in, res,
		sys.ProcsRunning, sys.ProcsBlocked, sys.CPUs, format.Decimal(sys.LoadAvg[0]), format.Decimal(sys.LoadAvg[1]), format.Decimal(sys.LoadAvg[2]))
	if sys.HasPSI {
		fmt.Fprintf(w, "  psi %s", format.Decimal(sys.PSICPUSomeAvg10))
	}
	if s.Unreadable > 0 {
		fmt.Fprintf(w, "  %d tasks unreadable", s.Unreadable)
	}
	if sys.NoRates != "" {
		fmt.Fprintf(w, "  no host rates: %s", sanitize.Name(sys.NoRates))
	}
	if s.Spike.Active {
		fmt.Fprintf(w, "  SPIKE: %s", format.SpikeReason(s.Spike))
	}
	w.WriteByte('\n')
	if t.opts.Cgroups {
		t.writeCgroups(s)
	} else if t.opts.Processes {
		t.row = textRows(t, fields.Process[:], len(s.Processes), func(i int) *model.ProcessRates { return &s.Processes[i] }, t.remainder(s))
	} else {
		t.writeThreads(s)
	}
	if s.Wakeups != nil {
		t.writeWakeups(s.Wakeups)
	}
	return w.Flush()
}

// writeThreads prints one row per thread, its columns as package fields
// lists them, then the line of switches no thread row holds.
func (t *Text) writeThreads(s *model.Snapshot) {
	row := t.row[:0]
	for i := range fields.Thread {
		if f := &fields.Thread[i]; f.TextTitle != "" {
			row = appendCell(row, f.TextWidth, f.TextLeft, false, f.TextTitle)
		}
	}
	t.endRow(row)
	for i := range s.Threads {
		if t.opts.Top > 0 && i >= t.opts.Top {
			break
		}
		th := &s.Threads[i]
		row = row[:0]
		for j := range fields.Thread {
			if f := &fields.Thread[j]; f.TextTitle != "" {
				row = appendCell(row, f.TextWidth, f.TextLeft, false, threadCell(f, th))
			}
		}
		t.endRow(row)
	}
	if rest := t.remainder(s); rest != nil {
		row = row[:0]
		for j := range fields.Thread {
			if f := &fields.Thread[j]; f.TextTitle != "" {
				row = appendCell(row, f.TextWidth, f.TextLeft, false, rest(f.ID, f.TextWidth))
			}
		}
		t.endRow(row)
	}
	t.row = row
}

// threadCell is one thread's cell of a text column.
func threadCell(f *fields.Field, th *model.ThreadRates) string {
	if f.Numeric() {
		return format.DecimalIn(f.Value(th), f.TextWidth)
	}
	switch f.ID {
	case fields.PID:
		return strconv.Itoa(th.PID)
	case fields.TID:
		return strconv.Itoa(th.TID)
	case fields.Comm:
		return clip(th.Comm)
	case fields.CPUs:
		return cpus(*th)
	case fields.Reason:
		return hot(th.Hot, th.Why)
	}
	return ""
}

// appendCell appends one column, a blank before all but the first (two
// for a gap), padded to width in terminal cells (fmt counts bytes).
func appendCell(row []byte, width int, left, gap bool, cell string) []byte {
	if len(row) > 0 {
		row = append(row, ' ')
		if gap {
			row = append(row, ' ')
		}
	}
	n := width - ansi.StringWidth(cell)
	if !left {
		for ; n > 0; n-- {
			row = append(row, ' ')
		}
	}
	row = append(row, cell...)
	if left {
		for ; n > 0; n-- {
			row = append(row, ' ')
		}
	}
	return row
}

// textRows prints a header and one row per row at(0)...at(n-1) (up to --top)
// in the columns of cols that text shows, then, when rest is set, the
// line of switches no row holds, rest giving its cells. It returns the
// row buffer for the next report.
func textRows[P any](t *Text, cols []fields.Column[P], n int, at func(int) P, rest func(id fields.ID, width int) string) []byte {
	row := t.row[:0]
	for i := range cols {
		if c := &cols[i]; c.TextTitle != "" {
			row = appendCell(row, c.TextWidth, c.TextLeft, c.Gap, c.TextTitle)
		}
	}
	t.endRow(row)
	for i := range n {
		if t.opts.Top > 0 && i >= t.opts.Top {
			break
		}
		r := at(i)
		row = row[:0]
		for j := range cols {
			if c := &cols[j]; c.TextTitle != "" {
				row = appendCell(row, c.TextWidth, c.TextLeft, c.Gap, textCell(c, r))
			}
		}
		t.endRow(row)
	}
	if rest != nil {
		row = row[:0]
		for j := range cols {
			if c := &cols[j]; c.TextTitle != "" {
				row = appendCell(row, c.TextWidth, c.TextLeft, c.Gap, rest(c.ID, c.TextWidth))
			}
		}
		t.endRow(row)
	}
	return row
}

// textCell is one row's cell of a text column: numbers with two decimals
// fitted to the column, whole ones for counts and IDs, "-" for a figure
// the row does not have.
func textCell[P any](c *fields.Column[P], r P) string {
	if c.Known != nil && !c.Known(r) {
		return "-"
	}
	switch c.Kind {
	case fields.Integer:
		return strconv.Itoa(int(c.Value(r)))
	case fields.Rate, fields.Percent, fields.Micros:
		return format.DecimalIn(c.Value(r), c.TextWidth)
	case fields.Name:
		return clip(c.Str(r))
	}
	return c.Str(r)
}

// endRow writes a row without trailing blanks, which paste badly.
func (t *Text) endRow(row []byte) {
	t.w.Write(bytes.TrimRight(row, " "))
	t.w.WriteByte('\n')
}

// writeCgroups prints one row per cgroup: its sums, CPU throttling and
// limit, named as users name it (the path when nothing better is known).
func (t *Text) writeCgroups(s *model.Snapshot) {
	t.row = textRows(t, fields.Cgroup[:], len(s.Cgroups), func(i int) *model.CgroupRates { return &s.Cgroups[i] }, nil)
}

// remainder is the cells of the line of switches no row holds, nil when
// there are none.
func (t *Text) remainder(s *model.Snapshot) func(fields.ID, int) string {
	if !(s.UnattributedPerSec > 0) {
		return nil
	}
	return func(id fields.ID, width int) string {
		switch id {
		case fields.Comm:
			return unattributedComm
		case fields.Total:
			return format.DecimalIn(s.UnattributedPerSec, width)
		case fields.Reason:
			return t.unattributedWhy()
		}
		return "-"
	}
}

// hidepidNote is the text report's one note on a hidepid procfs.
func hidepidNote(mode string) string {
	return "note: the procfs is mounted hidepid=" + sanitize.Name(mode) + ": other users' processes are hidden from this user " +
		"and in no row; cs/s still counts their switches, which make up most of (no thread row)"
}

// writeWakeups prints the wake-up pairs, busiest first: who woke whom, how
// often, how many of those ran the wakee on another CPU, and the wakee's
// wake-to-run latency.
func (t *Text) writeWakeups(wk *model.Wakeups) {
	w := t.w
	if wk.Unavailable != "" {
		line(w, "%s", sanitize.Name(wk.Unavailable))
		return
	}
	head := fmt.Sprintf("wake-ups: %d pairs", len(wk.Pairs))
	if wk.Dropped > 0 {
		head += fmt.Sprintf(", %d wake-ups not counted (pair map full)", wk.Dropped)
	}
	line(w, "%s", head)
	t.row = textRows(t, fields.Wakeup[:], len(wk.Pairs), func(i int) *model.WakeupPair { return &wk.Pairs[i] }, nil)
}

// line writes one row without trailing blanks, which paste badly.
func line(w *bufio.Writer, layout string, args ...any) {
	w.WriteString(strings.TrimRight(fmt.Sprintf(layout, args...), " "))
	w.WriteByte('\n')
}

// The last row of a text report holds the switches no thread row holds, so
// the rows add up to the system line's cs/s.
const unattributedComm = "(no thread row)"

// unattributedWhy says whose the remainder row's switches are: under
// hidepid, mostly the hidden processes', not born or exited threads'.
func (t *Text) unattributedWhy() string {
	if t.opts.HidePID != "" {
		return model.UnattributedWhyHidden
	}
	return model.UnattributedWhy
}

// clip makes a name safe for one table cell: sanitize.Name replaces what a
// terminal would act on (names arrive sanitized from the sampler; this
// guards any other source), and it is cut to commWidth terminal cells, so a
// wide CJK or emoji character counts two and is never split.
func clip(s string) string {
	return ansi.Truncate(sanitize.Name(s), commWidth, "")
}

func hot(isHot bool, why model.Why) string {
	if !isHot {
		return ""
	}
	return why.String()
}

func cpus(t model.ThreadRates) string {
	s := sanitize.Name(t.CPUsAllowed)
	if ansi.StringWidth(s) > 8 {
		s = ansi.Truncate(s, 8, "…")
	}
	if t.Pinned {
		return s + "*"
	}
	return s
}
