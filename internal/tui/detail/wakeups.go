package detail

import (
	"fmt"
	"strconv"

	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/textutil"
)

// topWakers is how many wakers and wakees the detail lists.
const topWakers = 5

// wakeRows is how many lines wakeLines(limit) makes, without making them.
func (m Model) wakeRows(limit int) int {
	switch {
	case m.wakeups == nil:
		return 0
	case m.wakeups.Unavailable != "":
		return 2
	}
	return 3 + min(limit, len(m.wokenBy)) + min(limit, len(m.wakes))
}

// wakeLines are the thread's top wakers ("woken by") and top wakees
// ("wakes"), up to limit of each, with rates, cross-CPU share and the
// wakee's latency.
func (m Model) wakeLines(limit int) []string {
	w, th := m.wakeups, m.th
	if w == nil {
		return nil
	}
	if w.Unavailable != "" {
		return []string{"", th.Dim.Render(textutil.Truncate(w.Unavailable, m.width))}
	}
	// A figure the tracer could not measure is "n/a" after its label; the
	// wake-up view's table cells say "-", which in a sentence read as
	// "-% cross-CPU" and "p50 - µs".
	row := func(tid int, comm string, p model.WakeupPair) string {
		id := strconv.Itoa(tid)
		if tid < 0 { // an interrupt: no thread
			id = "-"
		}
		cross, p50 := "n/a", "n/a"
		if p.CrossCPUKnown() {
			cross = format.Percent(p.CrossCPUPercent) + "%"
		}
		if p.LatencyKnown() {
			p50 = format.Micros(p.LatencyP50Micros) + " µs"
		}
		s := fmt.Sprintf("  %7s %-15s %9s/s  cross-CPU %6s  p50 %s", id, textutil.Truncate(comm, 15),
			format.Rate(p.PerSec, 9), cross, p50)
		return textutil.Truncate(s, m.width)
	}
	lines := []string{""}
	by := m.wokenBy
	if len(by) == 0 {
		lines = append(lines, th.Title.Render("woken by")+" "+th.Dim.Render("nobody in the last interval"))
	} else {
		lines = append(lines, th.Title.Render("woken by"))
		for _, p := range by[:min(len(by), limit)] {
			lines = append(lines, row(p.WakerTID, p.WakerComm, p))
		}
	}
	to := m.wakes
	if len(to) == 0 {
		lines = append(lines, th.Title.Render("wakes")+" "+th.Dim.Render("nobody in the last interval"))
	} else {
		lines = append(lines, th.Title.Render("wakes"))
		for _, p := range to[:min(len(to), limit)] {
			lines = append(lines, row(p.WakeeTID, p.WakeeComm, p))
		}
	}
	return lines
}
