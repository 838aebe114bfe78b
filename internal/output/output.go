// Package output writes batch reports: text like pidstat -w -t, to paste
// into a ticket, and JSON lines, to pipe into jq.
package output

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ctxtop/ctxtop/internal/fields"
	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// Options choose the rows of a report.
type Options struct {
	// Top limits rows per report; 0 means all.
	Top int
	// Processes prints one row per process instead of per thread (text).
	Processes bool
	// Cgroups prints one row per cgroup (text); wins over Processes.
	Cgroups bool
	// Host, when set, goes into every JSON line as "host".
	Host *hostinfo.Facts
	// HidePID is the procfs's hidepid mode when it hides other users'
	// processes from this user: the text says so once, JSON in every line
	// as "hidepid", and the remainder row is labelled as theirs.
	HidePID string
	// PIDs are the processes the report is limited to (--pid), none for
	// all: JSON then sums their wake-ups among themselves, as the load
	// panel does for the load ("wakeups_within").
	PIDs []int
}

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
	cs, in, res := num(sys.ContextSwitchesPerSec), num(sys.InterruptsPerSec), num(sys.ReschedIPIsPerSec)
	if sys.NoRates != "" {
		// Unknown, not a quiet host: the reason follows on the line.
		cs, in, res = "-", "-", "-"
	}
	fmt.Fprintf(w, "%s  cs/s %s  in/s %s  res/s %s  run %d  blk %d  cpus %d  load %s %s %s",
		s.Time.Format("15:04:05"), cs, in, res,
		sys.ProcsRunning, sys.ProcsBlocked, sys.CPUs, dec(sys.LoadAvg[0]), dec(sys.LoadAvg[1]), dec(sys.LoadAvg[2]))
	if sys.HasPSI {
		fmt.Fprintf(w, "  psi %s", dec(sys.PSICPUSomeAvg10))
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
				fit(p.VoluntaryPerSec, 11), fit(p.InvoluntaryPerSec, 11), fit(p.TotalPerSec(), 11), fit(p.CPUPercent, 7), fit(p.WaitPercent, 7), hot(p.Hot, p.Why))
		}
		if s.UnattributedPerSec > 0 {
			line(w, "%8s %s %7s %11s %11s %11s %7s %7s  %s", "-", pad(unattributedComm, commWidth), "-", "-", "-",
				fit(s.UnattributedPerSec, 11), "-", "-", t.unattributedWhy())
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
				cell = fit(s.UnattributedPerSec, f.TextWidth)
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
		return fit(f.Value(th), f.TextWidth)
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
			thr, ms = fit(c.ThrottledPercent, 7), fit(c.ThrottledMsPerSec, 9)
		}
		if c.LimitCPUs > 0 {
			limit = fit(c.LimitCPUs, 6)
		}
		line(w, "%6d %7d %11s %11s %11s %7s %7s %9s %6s %s %s", c.Processes, c.Threads,
			fit(c.VoluntaryPerSec, 11), fit(c.InvoluntaryPerSec, 11), fit(c.TotalPerSec(), 11), fit(c.CPUPercent, 7), thr, ms, limit,
			pad(hot(c.Hot, c.Why), hotWidth), c.Name)
	}
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
			p.WakeePID, p.WakeeTID, pad(clip(p.WakeeComm), commWidth), fit(p.PerSec, 11), known(p.CrossCPUPercent, p.CrossCPUKnown(), 7),
			known(p.LatencyP50Micros, p.LatencyKnown(), 9), known(p.LatencyP99Micros, p.LatencyKnown(), 9))
	}
}

// line writes one row without trailing blanks, which paste badly.
func line(w *bufio.Writer, format string, args ...any) {
	w.WriteString(strings.TrimRight(fmt.Sprintf(format, args...), " "))
	w.WriteByte('\n')
}

// clip makes a name safe for one table cell: sanitize.Name replaces what a
// terminal would act on (names arrive sanitized from the sampler; this
// guards any other source), and it is cut to commWidth terminal cells, so a
// wide CJK or emoji character counts two and is never split.
func clip(s string) string {
	return ansi.Truncate(sanitize.Name(s), commWidth, "")
}

// pad left-aligns s in width terminal cells: fmt's %-9s counts bytes, so a
// cell holding "…" came out two columns short, and one holding "数据" two
// columns long.
func pad(s string, width int) string {
	if n := ansi.StringWidth(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

// dec formats a rate like pidstat, two decimals and no separators, so the
// columns paste into a spreadsheet; "-" for a value that is not a number.
func dec(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// fit is dec when it fits in width cells, else the figure abbreviated
// (6.6T): a column never overflows and pushes the ones after it, whatever
// a counter did.
func fit(v float64, width int) string {
	if s := dec(v); len(s) <= width {
		return s
	}
	return format.Abbreviate(v, width)
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

func num(v float64) string { return format.Thousands(v) }

// JSON writes one object per report per line.
type JSON struct {
	w       io.Writer
	opts    Options
	enc     *json.Encoder
	scratch *threadScratch
}

// NewJSON returns a JSON-lines writer to w.
func NewJSON(w io.Writer, opts Options) *JSON {
	enc := json.NewEncoder(w)
	// A comm like "a<b>&c" stays readable in jq's input.
	enc.SetEscapeHTML(false)
	return &JSON{w: w, opts: opts, enc: enc, scratch: newThreadScratch()}
}

type jsonReport struct {
	Time      string        `json:"time"`
	Interval  float64       `json:"interval_s"`
	System    jsonSystem    `json:"system"`
	Processes []jsonProcess `json:"processes"`
	Threads   []jsonThread  `json:"threads"`
	Cgroups   []jsonCgroup  `json:"cgroups"`
	Host      *jsonHost     `json:"host,omitempty"`
	// Present only with --wakeups.
	Wakeups            *[]jsonWakeup    `json:"wakeups,omitempty"`
	WakeupsDropped     *uint64          `json:"wakeups_dropped,omitempty"`
	WakeupsUnavailable string           `json:"wakeups_unavailable,omitempty"`
	WakeupsWithin      *jsonWakeFigures `json:"wakeups_within,omitempty"`
	// Present only with --stacks.
	StacksUnavailable string  `json:"stacks_unavailable,omitempty"`
	StacksDropped     *uint64 `json:"stacks_dropped,omitempty"`
	StacksTargets     []int   `json:"stacks_targets,omitempty"`
	// HidePID is present when the procfs hides other users' processes
	// from this user: the rows are this user's, unattributed_cs_per_s is
	// mostly theirs.
	HidePID string `json:"hidepid,omitempty"`
}

type jsonCgroup struct {
	Cgroup    string  `json:"cgroup"`
	Name      string  `json:"name"`
	Processes int     `json:"processes"`
	Threads   int     `json:"threads"`
	Vol       float64 `json:"cswch_per_s"`
	Invol     float64 `json:"nvcswch_per_s"`
	CPU       float64 `json:"cpu_pct"`
	// null when the group's cpu.stat could not be read.
	ThrottledPct  *float64 `json:"throttled_pct"`
	ThrottledMsPS *float64 `json:"throttled_ms_per_s"`
	// Container is what runs in the group; absent for none.
	Container *fields.JSONContainer `json:"container,omitempty"`
}

// jsonHost is what the figures were measured on (gopsutil's host facts).
type jsonHost struct {
	Hostname string  `json:"hostname"`
	Kernel   string  `json:"kernel"`
	CPUModel string  `json:"cpu_model"`
	CPUs     int     `json:"cpus"`
	MemTotal uint64  `json:"mem_total_bytes"`
	Uptime   float64 `json:"uptime_s"`
}

// jsonWakeFigures are the wake-ups among the --pid processes' threads
// (model.WakeFigures).
type jsonWakeFigures struct {
	PerSec   float64 `json:"per_s"`
	CrossCPU float64 `json:"cross_cpu_pct"`
	P50      float64 `json:"latency_p50_us"`
	P99      float64 `json:"latency_p99_us"`
}

type jsonWakeup struct {
	// null when the waker is an interrupt (waker_comm timer, irq, softirq).
	WakerPID  *int    `json:"waker_pid"`
	WakerTID  *int    `json:"waker_tid"`
	WakerComm string  `json:"waker_comm"`
	WakeePID  int     `json:"wakee_pid"`
	WakeeTID  int     `json:"wakee_tid"`
	WakeeComm string  `json:"wakee_comm"`
	PerSec    float64 `json:"per_s"`
	// null: none of the pair's wake-ups was resolved (or timed) yet.
	CrossCPU *float64 `json:"cross_cpu_pct"`
	P50      *float64 `json:"latency_p50_us"`
	P99      *float64 `json:"latency_p99_us"`
}

// knownJSON is v rounded, or nil when it is not known.
func knownJSON(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	r := round2(v)
	return &r
}

// known is v as a text report shows it in width cells, or "-" when it is
// not known.
func known(v float64, ok bool, width int) string {
	if !ok {
		return "-"
	}
	return fit(v, width)
}

type jsonSystem struct {
	// Source is what read the tasks: "bpf-task-iter" or "proc".
	Source string `json:"source,omitempty"`
	// null when the interval has no host-wide rates; NoRates says why.
	CS           *float64 `json:"cs_per_s"`
	Intr         *float64 `json:"intr_per_s"`
	Resched      *float64 `json:"resched_ipi_per_s"`
	NoRates      string   `json:"no_rates,omitempty"`
	ProcsRunning uint64   `json:"procs_running"`
	ProcsBlocked uint64   `json:"procs_blocked"`
	CPUs         int      `json:"cpus"`
	// Unreadable counts the tasks that exist but could not be read (the
	// text report's "N tasks unreadable").
	Unreadable int      `json:"unreadable_tasks"`
	PSI        *float64 `json:"psi_cpu_some_avg10,omitempty"`
	// Unattributed is cs_per_s minus the sum over every thread row; null
	// with cs_per_s.
	Unattributed *float64 `json:"unattributed_cs_per_s"`
	// Baseline is the recent cs_per_s the spike rule judges against;
	// null until there is enough history for one.
	Baseline *float64 `json:"baseline_cs_per_s"`
	// Spike is why cs_per_s is a spike; absent when it is not.
	Spike string `json:"spike,omitempty"`
}

type jsonProcess struct {
	PID     int     `json:"pid"`
	Comm    string  `json:"comm"`
	Threads int     `json:"threads"`
	Vol     float64 `json:"cswch_per_s"`
	Invol   float64 `json:"nvcswch_per_s"`
	CPU     float64 `json:"cpu_pct"`
	// Container is what runs in the process's cgroup; absent for none.
	Container *fields.JSONContainer `json:"container,omitempty"`
}

// jsonThread is one thread as an object whose keys are package fields'
// JSON keys, in the table's order, written into the report's scratch.
type jsonThread struct {
	t  *model.ThreadRates
	sc *threadScratch
}

// threadScratch is the buffer and encoder every thread row of a report is
// written with, one per JSON writer: a busy host's report has thousands of
// rows, and an encoder and buffer each cost a third of the report's time.
// The report's encoder copies what MarshalJSON returns before the next row
// is written.
type threadScratch struct {
	b   bytes.Buffer
	enc *json.Encoder
}

func newThreadScratch() *threadScratch {
	sc := &threadScratch{}
	sc.enc = json.NewEncoder(&sc.b)
	// As the report's own encoder: json.Marshal would escape "<>&", and
	// the report keeps a Marshaler's escapes.
	sc.enc.SetEscapeHTML(false)
	return sc
}

// key starts a member: our keys are plain ASCII, written as they are.
func (sc *threadScratch) key(first bool, k string) {
	if !first {
		sc.b.WriteByte(',')
	}
	sc.b.WriteByte('"')
	sc.b.WriteString(k)
	sc.b.WriteString(`":`)
}

// value writes v as encoding/json does; numbers and the common kinds
// without the encoder's reflection.
func (sc *threadScratch) value(v any) error {
	switch x := v.(type) {
	case float64:
		return sc.float(x)
	case int:
		sc.b.Write(strconv.AppendInt(sc.b.AvailableBuffer(), int64(x), 10))
		return nil
	case bool:
		sc.b.WriteString(strconv.FormatBool(x))
		return nil
	case *model.Why:
		return sc.why(x)
	}
	if err := sc.enc.Encode(v); err != nil {
		return err
	}
	sc.b.Truncate(sc.b.Len() - 1) // Encode ends each value with a newline
	return nil
}

// why writes a hot row's WHY as an object: {"kind":"blocking",
// "wait_pct":3, "on":[{"reason":"futex","share":0.8}], "own_frame":"..."},
// "cgroup_throttled_pct" for a throttled cgroup's thread; each part only
// when the row has it. "on" is a list, biggest share first, in the WHY
// column's short words (wait_on has the full reasons).
func (sc *threadScratch) why(w *model.Why) error {
	sc.b.WriteString(`{"kind":"`)
	sc.b.WriteString(w.Kind.String())
	sc.b.WriteByte('"')
	if w.HasWait {
		sc.key(false, "wait_pct")
		if err := sc.float(float64(w.Wait)); err != nil {
			return err
		}
	}
	if w.InThrottled || w.Kind == model.Throttled {
		sc.key(false, "cgroup_throttled_pct")
		sc.b.Write(strconv.AppendInt(sc.b.AvailableBuffer(), int64(w.Throttled), 10))
	}
	if len(w.On) > 0 {
		sc.key(false, "on")
		sc.b.WriteByte('[')
		for i, s := range w.On {
			if i > 0 {
				sc.b.WriteByte(',')
			}
			sc.b.WriteByte('{')
			sc.key(true, "reason")
			if err := sc.value(s.Reason); err != nil {
				return err
			}
			sc.key(false, "share")
			if err := sc.float(round2(s.Share)); err != nil {
				return err
			}
			sc.b.WriteByte('}')
		}
		sc.b.WriteByte(']')
	}
	if w.Own != "" {
		sc.key(false, "own_frame")
		if err := sc.value(w.Own); err != nil {
			return err
		}
	}
	sc.b.WriteByte('}')
	return nil
}

// float writes x as encoding/json does: from 1e-6 to 1e21 (and 0) as 'f'
// with the fewest digits; anything else is left to the encoder ('e').
func (sc *threadScratch) float(x float64) error {
	if a := math.Abs(x); x == 0 || a >= 1e-6 && a < 1e21 {
		sc.b.Write(strconv.AppendFloat(sc.b.AvailableBuffer(), x, 'f', -1, 64))
		return nil
	}
	if err := sc.enc.Encode(x); err != nil {
		return err
	}
	sc.b.Truncate(sc.b.Len() - 1)
	return nil
}

// MarshalJSON writes the thread's fields.
func (j jsonThread) MarshalJSON() ([]byte, error) {
	sc := j.sc
	sc.b.Reset()
	sc.b.WriteByte('{')
	first := true
	for i := range fields.Thread {
		f := &fields.Thread[i]
		if f.JSON == "" {
			continue
		}
		if f.Numeric() {
			x := round2(f.Value(j.t))
			if x == 0 && f.OmitZero {
				continue
			}
			sc.key(first, f.JSON)
			first = false
			if err := sc.float(x); err != nil {
				return nil, err
			}
			continue
		}
		v := f.JSONValue(j.t)
		if v == nil {
			continue
		}
		sc.key(first, f.JSON)
		first = false
		if err := sc.value(v); err != nil {
			return nil, err
		}
	}
	// Stacks are per-thread lists, not columns: present only with
	// --stacks, for threads the stack tracer targeted.
	if len(j.t.BlockedAt) > 0 {
		sc.key(first, "blocked_at")
		first = false
		if err := sc.value(jsonStacks(j.t.BlockedAt)); err != nil {
			return nil, err
		}
	}
	if len(j.t.WokenFrom) > 0 {
		sc.key(first, "woken_from")
		if err := sc.value(jsonStacks(j.t.WokenFrom)); err != nil {
			return nil, err
		}
	}
	sc.b.WriteByte('}')
	return sc.b.Bytes(), nil
}

// jsonStack is one of a thread's top stacks over the last refreshes.
type jsonStack struct {
	// Frames are function names, innermost first (kernel, then user).
	Frames []string `json:"frames"`
	// Own is the innermost frame of the program's own code.
	Own   string  `json:"own,omitempty"`
	Waker string  `json:"waker_comm,omitempty"`
	Share float64 `json:"share"`
	Count uint64  `json:"count"`
	// NoFramePointers names the object a short user stack likely stopped in.
	NoFramePointers string `json:"no_frame_pointers,omitempty"`
	// Truncated says why the user stack ends before its outermost frame.
	Truncated string `json:"truncated,omitempty"`
}

func jsonStacks(ss []model.StackShare) []jsonStack {
	if len(ss) == 0 {
		return nil
	}
	out := make([]jsonStack, 0, len(ss))
	for _, s := range ss {
		out = append(out, jsonStack{s.Frames, s.Own, s.Waker, round(s.Share, 3), s.Count, s.NoFramePointers, s.Truncated})
	}
	return out
}

// Write prints one report as a line of JSON.
func (j *JSON) Write(s *model.Snapshot) error {
	r := jsonReport{
		Time: s.Time.Format(time.RFC3339Nano),
		// The interval keeps microseconds where rates keep two decimals:
		// rate × interval gives back the kernel's count, and a 1.004 s
		// interval written as 1 would hide the sampler's drift.
		Interval: round(s.Interval.Seconds(), 6),
		System: jsonSystem{
			ProcsRunning: s.System.ProcsRunning,
			ProcsBlocked: s.System.ProcsBlocked,
			CPUs:         s.System.CPUs,
			Unreadable:   s.Unreadable,
			NoRates:      s.System.NoRates,
		},
		Processes: []jsonProcess{},
		Threads:   []jsonThread{},
		Cgroups:   []jsonCgroup{},
		HidePID:   j.opts.HidePID,
	}
	if s.System.NoRates == "" {
		r.System.CS, r.System.Intr, r.System.Resched = knownJSON(s.System.ContextSwitchesPerSec, true),
			knownJSON(s.System.InterruptsPerSec, true), knownJSON(s.System.ReschedIPIsPerSec, true)
		r.System.Unattributed = knownJSON(s.UnattributedPerSec, true)
	}
	if s.System.HasPSI {
		v := round2(s.System.PSICPUSomeAvg10)
		r.System.PSI = &v
	}
	if s.Spike.Baseline > 0 {
		v := round2(s.Spike.Baseline)
		r.System.Baseline = &v
	}
	if s.Spike.Active {
		r.System.Spike = format.SpikeReason(s.Spike)
	}
	r.System.Source = s.Source
	if h := j.opts.Host; h != nil {
		r.Host = &jsonHost{h.Hostname, h.Kernel, h.CPUModel, h.CPUs, h.MemTotal, math.Floor(h.Uptime(s.Time).Seconds())}
	}
	for i, p := range s.Processes {
		if j.opts.Top > 0 && i >= j.opts.Top {
			break
		}
		r.Processes = append(r.Processes, jsonProcess{p.PID, p.Comm, p.Threads, round2(p.VoluntaryPerSec), round2(p.InvoluntaryPerSec), round2(p.CPUPercent), fields.ContainerJSON(p.Container)})
	}
	for i := range s.Threads {
		if j.opts.Top > 0 && i >= j.opts.Top {
			break
		}
		jt := jsonThread{&s.Threads[i], j.scratch}
		r.Threads = append(r.Threads, jt)
	}
	for i, c := range s.Cgroups {
		if j.opts.Top > 0 && i >= j.opts.Top {
			break
		}
		jc := jsonCgroup{Cgroup: c.Path, Name: c.Name, Processes: c.Processes, Threads: c.Threads,
			Vol: round2(c.VoluntaryPerSec), Invol: round2(c.InvoluntaryPerSec), CPU: round2(c.CPUPercent),
			Container: fields.ContainerJSON(c.Container)}
		if c.HasThrottling {
			p, ms := round2(c.ThrottledPercent), round2(c.ThrottledMsPerSec)
			jc.ThrottledPct, jc.ThrottledMsPS = &p, &ms
		}
		r.Cgroups = append(r.Cgroups, jc)
	}
	if wk := s.Wakeups; wk != nil {
		pairs := []jsonWakeup{}
		for i, p := range wk.Pairs {
			if j.opts.Top > 0 && i >= j.opts.Top {
				break
			}
			jp := jsonWakeup{nil, nil, p.WakerComm, p.WakeePID, p.WakeeTID, p.WakeeComm,
				round2(p.PerSec), knownJSON(p.CrossCPUPercent, p.CrossCPUKnown()), knownJSON(p.LatencyP50Micros, p.LatencyKnown()), knownJSON(p.LatencyP99Micros, p.LatencyKnown())}
			if !p.WakerIsInterrupt() {
				jp.WakerPID, jp.WakerTID = &p.WakerPID, &p.WakerTID
			}
			pairs = append(pairs, jp)
		}
		r.Wakeups, r.WakeupsUnavailable = &pairs, wk.Unavailable
		if len(j.opts.PIDs) > 0 {
			if f, ok := wk.Among(func(pid, _ int) bool { return slices.Contains(j.opts.PIDs, pid) }); ok {
				r.WakeupsWithin = &jsonWakeFigures{round2(f.PerSec), round2(f.CrossCPUPercent), round2(f.LatencyP50Micros), round2(f.LatencyP99Micros)}
			}
		}
		// Without the tracer there is no count of dropped wake-ups either.
		if wk.Unavailable == "" {
			dropped := wk.Dropped
			r.WakeupsDropped = &dropped
		}
	}
	if st := s.Stacks; st != nil {
		r.StacksUnavailable = st.Unavailable
		if st.Unavailable == "" {
			d := st.Dropped
			r.StacksDropped, r.StacksTargets = &d, st.Targets
		}
	}
	return j.enc.Encode(&r)
}

func round2(v float64) float64 { return round(v, 2) }

// round rounds to places decimals; JSON has no NaN, so a value that is not a
// number (the model produces none) is written as 0 rather than failing the
// whole report.
func round(v float64, places int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}
