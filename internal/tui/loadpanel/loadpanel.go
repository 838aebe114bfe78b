// Package loadpanel draws the load generator's strip above the table and
// the demo's captions, results and large figures, which are meant to be
// read from the back of a room.
package loadpanel

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/textutil"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
)

// State is what the panel shows; the root model owns it.
type State struct {
	// Mode names the workload ("pool, 2 threads"); Title says what runs.
	Mode    string
	Title   string
	Pinning string
	Running bool
	Elapsed string
	// NsPerRoundTrip is the run's recent cost, one pair's round trip (one
	// thread's unit); 0 before the first figure.
	NsPerRoundTrip float64
	RoundTrips     uint64
	// Threads is a threaded mode's thread count, 0 for ping-pong pairs: its
	// figures are then units per second, as ctxtop load gives them, since
	// it makes no round trips.
	Threads int
	// Unit and Units name what the mode counts; "" reads as round trips.
	Unit, Units string
	// LoadSwitches is its threads' switches/s in the last interval.
	LoadSwitches float64
	Err          string
	// Note says why the last key did nothing.
	Note string
	// Wake is the run's own wake-ups, when the tracer can see them.
	Wake *Wake
}

// Wake is how the load's threads woke each other in the last interval.
type Wake struct {
	model.WakeFigures
	ReschedIPIsPerSec float64
	// Note says why there are no figures, instead of them.
	Note string
}

// wakeLine is one line on the load's wake-ups: the share that crossed
// CPUs, what each cost in waiting, and the IPIs that carried them.
func (m Model) wakeLine() string {
	w, th := m.state.Wake, m.th
	if w == nil {
		return ""
	}
	if w.Note != "" {
		return th.Dim.Render(textutil.Truncate(w.Note, m.width))
	}
	return textutil.Truncate(th.Value.Render(format.Percent(w.CrossCPUPercent)+"%")+" of "+format.Thousands(w.PerSec)+" wake-ups/s cross-CPU  "+
		"wake→run p50 "+th.Value.Render(format.Micros(w.LatencyP50Micros)+" µs")+" p99 "+format.Micros(w.LatencyP99Micros)+" µs  "+
		th.Value.Render(format.Thousands(w.ReschedIPIsPerSec))+" IPI/s", m.width)
}

// Result is one finished demo step.
type Result struct {
	Step           string
	NsPerRoundTrip float64
	NsPerSwitch    float64
	// SystemCS is the mean over the step's samples; Sampled is false when
	// the step was left before its first sample.
	SystemCS float64
	Sampled  bool
}

// Demo is the tour's state.
type Demo struct {
	Step, Steps int
	Title       string
	Caption     string
	Remaining   string
	Held        bool
	// Finished: the tour is over and no workload runs.
	Finished bool
	SystemCS float64
	Results  []Result
	// Busy warns that the baseline was far above an idle host's rate, so
	// every figure includes other work; empty when it was not.
	Busy string
}

// Model is the panel component.
type Model struct {
	th            theme.Theme
	width, height int
	state         State
	demo          *Demo
}

// New returns an empty panel.
func New(th theme.Theme) Model { return Model{th: th} }

// Update has nothing of its own to handle; keys are the root's.
func (m Model) Update(tea.Msg) (Model, tea.Cmd) { return m, nil }

// SetSize sets the width and the most lines the panel may take.
func (m *Model) SetSize(w, h int) { m.width, m.height = w, h }

// SetTheme swaps the styles.
func (m *Model) SetTheme(th theme.Theme) { m.th = th }

// SetState shows s, and the demo when d is not nil.
func (m *Model) SetState(s State, d *Demo) { m.state, m.demo = s, d }

// Height is the lines View takes at the current size.
func (m Model) Height() int { return textutil.Lines(m.View()) }

// View renders the panel.
func (m Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	var lines []string
	if m.demo != nil {
		lines = m.demoLines()
	} else {
		lines = m.loadLines()
	}
	return textutil.Fit(strings.Join(lines, "\n"), m.width, m.height)
}

func (m Model) loadLines() []string {
	th, s := m.th, m.state
	status := th.Dim.Render("stopped")
	if s.Running {
		status = th.Load.Render("running " + s.Elapsed)
	}
	line1 := th.Title.Render("LOAD") + " " + th.Dim.Render("m") + " " + s.Mode + "  " + th.Dim.Render("p") + " " + s.Pinning + "  " + status +
		"  " + th.Dim.Render("s start/stop  L hide")
	unit, units := s.Unit, s.Units
	if unit == "" {
		unit, units = "round trip", "round trips"
	}
	var line2 string
	switch {
	case s.Err != "":
		line2 = th.Error.Render(s.Err)
	case s.Running && s.NsPerRoundTrip > 0 && s.Threads > 0:
		// One thread's time per unit, over all the threads.
		rate := float64(s.Threads) * 1e9 / s.NsPerRoundTrip
		line2 = th.Value.Render(format.Thousands(rate)) + " " + units + "/s (" + format.Thousands(rate/float64(s.Threads)) + " per thread)  " +
			th.Value.Render(format.Thousands(s.LoadSwitches)) + " cs/s from its threads"
	case s.Running && s.NsPerRoundTrip > 0:
		line2 = th.Value.Render(format.Thousands(s.NsPerRoundTrip)) + " ns/" + unit + "  " +
			th.Value.Render(format.Thousands(s.LoadSwitches)) + " cs/s from its threads  " +
			th.Dim.Render(format.Thousands(float64(s.RoundTrips))+" "+units)
	case s.Running:
		line2 = th.Dim.Render("measuring…")
	case s.Title != "":
		line2 = th.Dim.Render(s.Title + "; s starts it, m another mode")
	default:
		line2 = th.Dim.Render("press s to start it, m for another mode")
	}
	lines := []string{textutil.Truncate(line1, m.width), textutil.Truncate(line2, m.width)}
	if s.Note != "" {
		lines = append(lines, textutil.Truncate(th.Spike.Render(s.Note), m.width))
	}
	if w := m.wakeLine(); w != "" && s.Running {
		lines = append(lines, w)
	}
	return lines
}

// demoLines lays the tour out for the panel's height. Everything an
// audience reads (the step, its whole caption, every result row) comes
// before size: the large figures give way to one line first, then the keys
// reminder, then the caption is cut to one line, and only then the oldest
// result rows.
func (m Model) demoLines() []string {
	th, d, s := m.th, m.demo, m.state
	hold := ""
	if d.Held {
		hold = " " + th.Spike.Render("HELD")
	}
	title := textutil.Truncate(th.Title.Render(fmt.Sprintf("DEMO %d/%d", d.Step+1, d.Steps))+" "+th.Value.Render(d.Title)+" "+th.Dim.Render(d.Remaining)+hold, m.width)
	caption := textutil.Wrap(d.Caption, m.width)
	if s.Err != "" {
		caption = []string{th.Error.Render(textutil.Truncate("this step's workload did not start: "+s.Err, m.width))}
	}
	nsText := "-"
	if s.Running && s.NsPerRoundTrip > 0 {
		nsText = format.Thousands(s.NsPerRoundTrip)
	}
	csText := format.Thousands(d.SystemCS)
	small := []string{th.Value.Render(nsText) + " ns/round trip   " + th.Value.Render(csText) + " cs/s system-wide"}
	figures := small
	if big := m.bigFigures(nsText, csText); big != nil && m.height >= 14 {
		figures = big
	}
	var extra []string // the wake-ups and the busy host's warning
	if w := m.wakeLine(); w != "" && s.Running {
		extra = append(extra, w)
	}
	if d.Busy != "" {
		for _, l := range textutil.Wrap(d.Busy, m.width) {
			extra = append(extra, th.Error.Render(l))
		}
	}
	results := m.resultLines()
	keys := "n next  N back  space hold  q quit"
	if d.Finished {
		keys = "N run the last step again  q quit"
	}
	keyLines := []string{th.Dim.Render(textutil.Truncate(keys, m.width))}

	total := func() int {
		return 1 + len(caption) + len(figures) + len(extra) + len(results) + len(keyLines)
	}
	if total() > m.height {
		figures = small
	}
	if total() > m.height {
		keyLines = nil
	}
	if total() > m.height && len(caption) > 1 {
		caption = []string{textutil.Truncate(d.Caption, m.width)}
	}
	if over := total() - m.height; over > 0 && len(results) > 0 {
		// The newest rows stay; a header alone is no use.
		if keep := len(results) - 1 - over; keep > 0 {
			results = append(results[:1], results[1+over:]...)
		} else {
			results = nil
		}
	}
	if keyLines == nil && total()+1 <= m.height {
		// No room for a result row, but for the reminder.
		keyLines = []string{th.Dim.Render(textutil.Truncate(keys, m.width))}
	}
	lines := append([]string{title}, caption...)
	lines = append(lines, figures...)
	lines = append(lines, extra...)
	lines = append(lines, results...)
	return append(lines, keyLines...)
}

// resultLines are the finished steps' table, header first; none before the
// first step is done.
func (m Model) resultLines() []string {
	d, th := m.demo, m.th
	if len(d.Results) == 0 {
		return nil
	}
	head := fmt.Sprintf("%-30s %12s %10s %12s", "step", "ns/round trip", "ns/switch", "cs/s system")
	lines := []string{th.ColumnHeader.Render(textutil.PadRight(head, m.width))}
	for _, r := range d.Results {
		ns, sw, cs := "-", "-", "-"
		if r.Sampled {
			cs = format.Thousands(r.SystemCS)
		}
		if r.NsPerRoundTrip > 0 {
			ns = format.Thousands(r.NsPerRoundTrip)
		}
		if r.NsPerSwitch > 0 {
			sw = format.Thousands(r.NsPerSwitch)
		}
		lines = append(lines, textutil.Truncate(fmt.Sprintf("%-30s %12s %10s %12s", textutil.Truncate(r.Step, 30), ns, sw, cs), m.width))
	}
	return lines
}

// bigFigures sets the two key numbers side by side in block digits, or
// returns nil when they do not fit the width.
func (m Model) bigFigures(ns, cs string) []string {
	a, b := Big(ns), Big(cs)
	la, lb := "ns per round trip", "context switches/s, whole system"
	wa := max(textutil.Width(a[0]), len(la))
	wb := max(textutil.Width(b[0]), len(lb))
	if wa+4+wb > m.width {
		return nil
	}
	out := make([]string, 0, 4)
	for i := range 3 {
		out = append(out, m.th.Big.Render(textutil.PadRight(a[i], wa))+"    "+m.th.Big.Render(textutil.PadRight(b[i], wb)))
	}
	out = append(out, m.th.Dim.Render(textutil.PadRight(la, wa)+"    "+textutil.PadRight(lb, wb)))
	return out
}

var glyphs = map[rune][3]string{
	'0': {"█▀█", "█ █", "█▄█"},
	'1': {"▀█ ", " █ ", "▄█▄"},
	'2': {"▀▀█", "█▀▀", "█▄▄"},
	'3': {"▀▀█", " ▀█", "▄▄█"},
	'4': {"█ █", "▀▀█", "  █"},
	'5': {"█▀▀", "▀▀█", "▄▄█"},
	'6': {"█▀▀", "█▀█", "█▄█"},
	'7': {"▀▀█", "  █", "  █"},
	'8': {"█▀█", "█▀█", "█▄█"},
	'9': {"█▀█", "▀▀█", "▄▄█"},
	',': {" ", " ", "▄"},
	'.': {" ", " ", "▄"},
	'-': {"   ", "▀▀▀", "   "},
}

// Big renders s in three-line block digits; unknown runes become blanks.
func Big(s string) [3]string {
	var rows [3]strings.Builder
	for i, r := range s {
		g, ok := glyphs[r]
		if !ok {
			g = [3]string{" ", " ", " "}
		}
		for j := range 3 {
			if i > 0 {
				rows[j].WriteByte(' ')
			}
			rows[j].WriteString(g[j])
		}
	}
	return [3]string{rows[0].String(), rows[1].String(), rows[2].String()}
}
