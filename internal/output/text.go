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
		line(w, "%8s %-*s %7s %11s %11s %11s %7s %7s  %s", "PID", commWidth, "COMM", "THREADS", "CSWCH/s", "NVCSWCH/s", "TOTAL/s", "%CPU", "WAIT%", "HOT")
		for i, p := range s.Processes {
			if t.opts.Top > 0 && i >= t.opts.Top {
				break
			}
			line(w, "%8d %s %7d %11s %11s %11s %7s %7s  %s", p.PID, pad(clip(p.Comm), commWidth), p.Threads,
				format.DecimalIn(p.VoluntaryPerSec, 11), format.DecimalIn(p.InvoluntaryPerSec, 11), format.DecimalIn(p.TotalPerSec(), 11), format.DecimalIn(p.CPUPercent, 7), format.DecimalIn(p.WaitPercent, 7), hot(p.Hot, p.Why))
		}
		if s.UnattributedPerSec > 0 {
			line(w, "%8s %s %7s %11s %11s %11s %7s %7s  %s", "-", pad(unattributedComm, commWidth), "-", "-", "-",
				format.DecimalIn(s.UnattributedPerSec, 11), "-", "-", t.unattributedWhy())
		}
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
			row = appendCell(row, f, f.TextTitle)
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
				row = appendCell(row, f, threadCell(f, th))
			}
		}
		t.endRow(row)
	}
	if s.UnattributedPerSec > 0 {
		row = row[:0]
		for j := range fields.Thread {
			f := &fields.Thread[j]
			if f.TextTitle == "" {
				continue
			}
			cell := "-"
			switch f.ID {
			case fields.Comm:
				cell = unattributedComm
			case fields.Total:
				cell = format.DecimalIn(s.UnattributedPerSec, f.TextWidth)
			case fields.Reason:
				cell = t.unattributedWhy()
			}
			row = appendCell(row, f, cell)
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

// appendCell appends one column, a blank before all but the first, padded
// to the field's width in terminal cells (fmt counts bytes).
func appendCell(row []byte, f *fields.Field, cell string) []byte {
	if len(row) > 0 {
		row = append(row, ' ')
	}
	n := f.TextWidth - ansi.StringWidth(cell)
	if !f.TextLeft {
		for ; n > 0; n-- {
			row = append(row, ' ')
		}
	}
	row = append(row, cell...)
	if f.TextLeft {
		for ; n > 0; n-- {
			row = append(row, ' ')
		}
	}
	return row
}

// endRow writes a row without trailing blanks, which paste badly.
func (t *Text) endRow(row []byte) {
	t.w.Write(bytes.TrimRight(row, " "))
	t.w.WriteByte('\n')
}

// hotWidth fits "throttled 100%"; the name comes last, whole, as pidstat
// puts its Command.
const hotWidth = 14

// writeCgroups prints one row per cgroup: its sums, CPU throttling and
// limit, named as users name it (the path when nothing better is known).
func (t *Text) writeCgroups(s *model.Snapshot) {
	w := t.w
	line(w, "%6s %7s %11s %11s %11s %7s %7s %9s %6s %-*s %s", "PROCS", "THREADS", "CSWCH/s", "NVCSWCH/s", "TOTAL/s", "%CPU", "THRTL%", "THRTLms/s", "LIMIT", hotWidth, "HOT", "CGROUP")
	for i, c := range s.Cgroups {
		if t.opts.Top > 0 && i >= t.opts.Top {
			break
		}
		thr, ms, limit := "-", "-", "-"
		if c.HasThrottling {
			thr, ms = format.DecimalIn(c.ThrottledPercent, 7), format.DecimalIn(c.ThrottledMsPerSec, 9)
		}
		if c.LimitCPUs > 0 {
			limit = format.DecimalIn(c.LimitCPUs, 6)
		}
		line(w, "%6d %7d %11s %11s %11s %7s %7s %9s %6s %s %s", c.Processes, c.Threads,
			format.DecimalIn(c.VoluntaryPerSec, 11), format.DecimalIn(c.InvoluntaryPerSec, 11), format.DecimalIn(c.TotalPerSec(), 11), format.DecimalIn(c.CPUPercent, 7), thr, ms, limit,
			pad(hot(c.Hot, c.Why), hotWidth), c.Name)
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
	line(w, "%8s %8s %-*s %8s %8s %-*s %11s %7s %9s %9s", "PID", "TID", commWidth, "WAKER", "PID", "TID", commWidth, "WAKEE",
		"WAKEUPS/s", "XCPU%", "P50us", "P99us")
	for i, p := range wk.Pairs {
		if t.opts.Top > 0 && i >= t.opts.Top {
			break
		}
		wpid, wtid := strconv.Itoa(p.WakerPID), strconv.Itoa(p.WakerTID)
		if p.WakerIsInterrupt() { // no thread: timer, irq, softirq
			wpid, wtid = "-", "-"
		}
		line(w, "%8s %8s %s %8d %8d %s %11s %7s %9s %9s", wpid, wtid, pad(clip(p.WakerComm), commWidth),
			p.WakeePID, p.WakeeTID, pad(clip(p.WakeeComm), commWidth), format.DecimalIn(p.PerSec, 11), known(p.CrossCPUPercent, p.CrossCPUKnown(), 7),
			known(p.LatencyP50Micros, p.LatencyKnown(), 9), known(p.LatencyP99Micros, p.LatencyKnown(), 9))
	}
}

// known is v as a text report shows it in width cells, or "-" when it is
// not known.
func known(v float64, ok bool, width int) string {
	if !ok {
		return "-"
	}
	return format.DecimalIn(v, width)
}

// line writes one row without trailing blanks, which paste badly.
func line(w *bufio.Writer, layout string, args ...any) {
	w.WriteString(strings.TrimRight(fmt.Sprintf(layout, args...), " "))
	w.WriteByte('\n')
}
