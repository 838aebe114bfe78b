package table

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/fields"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/keys"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

func newTable(w, h int) Model { return tableOf(w, h, tuitest.Snapshot()) }

// tableOf is a w by h table showing s, hot at 1,000 switches/s.
func tableOf(w, h int, s model.Snapshot) Model {
	m := New(theme.New(false, true), keys.New(), 1000)
	m.SetSize(w, h)
	m.SetSnapshot(&s)
	return m
}

func TestView(t *testing.T) {
	for _, sz := range tuitest.Sizes {
		for _, mode := range []string{"threads", "processes", "grouped"} {
			name := sz.Name + "-" + mode
			t.Run(name, func(t *testing.T) {
				m := newTable(sz.Width, sz.Height-5)
				m.SetProcesses(mode == "processes")
				m.SetGrouped(mode == "grouped")
				got := tuitest.Render(t, m.View(), colorprofile.Ascii)
				tuitest.CheckFits(t, got, sz.Width, sz.Height-5)
				tuitest.Golden(t, name, got)
			})
		}
	}
}

// TestViewColours keeps one golden with colours, so the hot grading and
// selection styles are checked too.
func TestViewColours(t *testing.T) {
	m := newTable(80, 12)
	got := tuitest.Render(t, m.View(), colorprofile.ANSI256)
	tuitest.Golden(t, "80x12-ansi256", got)
}

func TestColumnsDropByPriority(t *testing.T) {
	for _, c := range []struct {
		width int
		want  []string
	}{
		{40, []string{"PID", "TID", "COMM", "▼TOTAL/s"}},
		{80, []string{"PID", "TID", "COMM", "CSW/s", "NVCSW/s", "▼TOTAL/s", "WHY"}},
		{86, []string{"PID", "TID", "COMM", "CSW/s", "NVCSW/s", "▼TOTAL/s", "%CPU", "WHY"}},
		// MIGR/s is detail: the first to go.
		{100, []string{"PID", "TID", "COMM", "CSW/s", "NVCSW/s", "▼TOTAL/s", "%CPU", "WAIT%", "CPUS", "WHY"}},
		{120, []string{"PID", "TID", "COMM", "CSW/s", "NVCSW/s", "▼TOTAL/s", "%CPU", "WAIT%", "MIGR/s", "CPUS", "WHY"}},
	} {
		m2 := New(theme.New(true, true), keys.New(), 1000)
		m2.SetSize(c.width, 10)
		s := tuitest.Snapshot()
		m2.SetSnapshot(&s)
		head := strings.Fields(tuitest.Render(t, strings.Split(m2.View(), "\n")[0], colorprofile.NoTTY))
		if diff := cmp.Diff(c.want, head); diff != "" {
			t.Errorf("width %d: columns (-want +got)\n%s", c.width, diff)
		}
	}
}

func keyPress(s string) tea.KeyPressMsg {
	switch s {
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case "home":
		return tea.KeyPressMsg{Code: tea.KeyHome}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func selectedKey(m Model) string {
	r, _ := m.Selected()
	return r.Key
}

func TestSelectionFollowsThreadAcrossRefreshes(t *testing.T) {
	m := newTable(80, 10)
	m, _ = m.Update(keyPress("down"))
	m, _ = m.Update(keyPress("down"))
	if got := selectedKey(m); got != ThreadKey(911) {
		t.Fatalf("third row is %s, want pool-1-thread-1 (t911)", got)
	}
	// Next refresh: thread 911 became the busiest; the cursor moves with it.
	s := tuitest.Snapshot()
	s.Threads[2].VoluntaryPerSec = 1e6
	m.SetSnapshot(&s)
	if got := selectedKey(m); got != ThreadKey(911) {
		t.Errorf("after refresh selected %s, want t911", got)
	}
	if r, _ := m.Selected(); m.Rows()[0].Key != r.Key {
		t.Errorf("t911 should be first by TOTAL/s now")
	}
	// The thread exits: the cursor stays where it was instead of jumping.
	s2 := tuitest.Snapshot()
	s2.Threads = append(s2.Threads[:2], s2.Threads[3:]...)
	m.SetSnapshot(&s2)
	if r, ok := m.Selected(); !ok || m.cursor != 0 || r.Key == ThreadKey(911) {
		t.Errorf("after exit: selected %v at %d", r.Key, m.cursor)
	}
}

func TestNavigationClamps(t *testing.T) {
	m := newTable(80, 5)
	m, _ = m.Update(keyPress("end"))
	if m.cursor != len(m.Rows())-1 {
		t.Errorf("End: cursor %d, want %d", m.cursor, len(m.Rows())-1)
	}
	m, _ = m.Update(keyPress("down"))
	if m.cursor != len(m.Rows())-1 {
		t.Errorf("Down past the end moved to %d", m.cursor)
	}
	// Four visible rows: the last must be on screen.
	if !strings.Contains(m.View(), "a-process") {
		t.Errorf("last row not scrolled into view:\n%s", m.View())
	}
	m, _ = m.Update(keyPress("home"))
	m, _ = m.Update(keyPress("up"))
	if m.cursor != 0 || m.offset != 0 {
		t.Errorf("Home/Up: cursor %d offset %d", m.cursor, m.offset)
	}
	m, _ = m.Update(keyPress("k"))
	m, _ = m.Update(keyPress("j"))
	if m.cursor != 1 {
		t.Errorf("k then j: cursor %d, want 1", m.cursor)
	}
}

func TestSortCycleAndReverse(t *testing.T) {
	m := newTable(120, 20)
	m.SortBy(-1) // TOTAL -> NVCSW
	if c, _ := m.Sort(); c != ColInvoluntary {
		t.Fatalf("sort column %v, want NVCSW", c)
	}
	if first := m.Rows()[0].TID; first != 911 {
		t.Errorf("by NVCSW/s first TID %d, want 911", first)
	}
	m.SortBy(-1)
	m.SortBy(-1) // COMM ascending
	var names []string
	for _, r := range m.Rows() {
		names = append(names, r.Comm)
	}
	if names[0] != "a-process-with-a-very-long-name" || names[len(names)-1] != "systemd" {
		t.Errorf("by COMM: %v", names)
	}
	m.Reverse()
	if m.Rows()[0].Comm != "systemd" {
		t.Errorf("reversed COMM: first %s", m.Rows()[0].Comm)
	}
	// Unsortable columns are skipped when cycling past the end.
	for range 20 {
		m.SortBy(+1)
		if c, _ := m.Sort(); c == ColCPUs || c == ColReason {
			t.Fatalf("sorted by unsortable column %v", c)
		}
	}
}

func TestFilterByNameAndPID(t *testing.T) {
	m := newTable(80, 20)
	m.SetFilter("POOL")
	if n := len(m.Rows()); n != 3 {
		t.Errorf("filter POOL: %d rows, want 3 (case-insensitive)", n)
	}
	m.SetFilter("4242")
	if n := len(m.Rows()); n != 2 {
		t.Errorf("filter by PID: %d rows, want 2", n)
	}
	m.SetFilter("4244")
	if n := len(m.Rows()); n != 1 || m.Rows()[0].TID != 4244 {
		t.Errorf("filter by TID: %v", m.Rows())
	}
	m.SetFilter("nothing-like-this")
	if !strings.Contains(m.View(), "nothing matches") {
		t.Errorf("empty filter result not explained:\n%s", m.View())
	}
}

// The message names the filter as it was typed: a regex-minded user's
// backslash is one backslash, not the two Go's quoting makes of it.
func TestFilterMessageShowsTheFilterAsTyped(t *testing.T) {
	m := newTable(80, 20)
	m.SetFilter(`pool\d`)
	view := ansi.Strip(m.View())
	if !strings.Contains(view, `nothing matches the filter "pool\d"`) {
		t.Errorf("want the filter as typed, one backslash:\n%s", view)
	}
	// What a terminal would act on is still shown harmless.
	m.SetFilter("x\x1b[2J")
	if view := m.View(); strings.Contains(view, "\x1b[2J") {
		t.Errorf("an escape typed into the filter reached the screen: %q", view)
	}
}

func TestGroupSumsPool(t *testing.T) {
	m := newTable(120, 20)
	m.SetGrouped(true)
	var pool *Row
	for i, r := range m.Rows() {
		if r.Comm == "pool-*-thread-*" {
			pool = &m.Rows()[i]
		}
	}
	if pool == nil {
		t.Fatalf("no pool group in %v", m.Rows())
	}
	type sums struct {
		Count, PID             int
		Voluntary, Involuntary float64
	}
	want := sums{Count: 3, Voluntary: 2310 + 2204 + 1990, Involuntary: 840 + 801 + 12, PID: 901}
	got := sums{Count: pool.Count, Voluntary: pool.Vals[fields.Voluntary], Involuntary: pool.Vals[fields.Involuntary], PID: pool.PID}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pool group (-want +got)\n%s", diff)
	}
	if !strings.Contains(m.View(), "×3") {
		t.Errorf("group row should show its member count:\n%s", m.View())
	}
}

func TestNoRowWiderThanTable(t *testing.T) {
	for w := 20; w <= 140; w += 7 {
		m := newTable(w, 8)
		got := m.View()
		tuitest.CheckFits(t, got, w, 8)
		if t.Failed() {
			t.Fatalf("width %d:\n%s", w, fmt.Sprint(got))
		}
	}
}

// A thread whose counters jumped (a rewritten --proc tree, a buggy kernel)
// has absurd rates: abbreviated, they keep to their columns.
func TestAbsurdRatesKeepToTheirColumns(t *testing.T) {
	s := tuitest.Snapshot()
	th := &s.Threads[0]
	th.VoluntaryPerSec, th.InvoluntaryPerSec, th.CPUPercent, th.WaitPercent = 6639127543485.86, 3e9, 6639127543485.86, 4e7
	for _, w := range []int{80, 120, 160} {
		m := New(theme.New(false, true), keys.New(), 1000)
		m.SetSize(w, 8)
		m.SetSnapshot(&s)
		view := ansi.Strip(m.View())
		tuitest.CheckFits(t, view, w, 8)
		lines := strings.Split(view, "\n")
		head := []rune(lines[0]) // one cell a rune here, the sort mark too
		for _, title := range []string{"TOTAL/s", "%CPU"} {
			i := strings.Index(string(head), title)
			if i < 0 {
				continue // the column is dropped at this width
			}
			end := utf8.RuneCountInString(string(head)[:i]) + len(title)
			for _, line := range lines[1:3] {
				l := []rune(line)
				if len(l) < end || l[end-1] == ' ' || end < len(l) && l[end] != ' ' {
					t.Errorf("width %d: a row's %s is not right-aligned under its title:\n%s\n%s", w, title, string(head), line)
				}
			}
		}
		if !strings.Contains(lines[1], "6.6T") {
			t.Errorf("width %d: the absurd rate is not abbreviated:\n%s", w, view)
		}
	}
}

// The cursor starts on the top row. Until the user moves it, it is a place,
// not a thread: following the first busiest row down the list would scroll
// the new busiest rows (a load that just started) off the screen.
func TestTopRowsStayOnScreenUntilUserSelects(t *testing.T) {
	m := newTable(80, 5) // header and four rows
	if got := selectedKey(m); got != ThreadKey(4243) {
		t.Fatalf("first row is %s, want pp-ping (t4243)", got)
	}
	s := tuitest.Snapshot()
	s.Threads[0].VoluntaryPerSec, s.Threads[0].InvoluntaryPerSec = 0.5, 0 // pp-ping goes quiet
	m.SetSnapshot(&s)
	if diff := cmp.Diff(ThreadKey(4244), selectedKey(m)); diff != "" {
		t.Errorf("selected row (-want +got)\n%s", diff)
	}
	if v := m.View(); !strings.Contains(v, "pp-pong") {
		t.Errorf("busiest row pp-pong scrolled off the screen:\n%s", v)
	}
	// Once the user picks a row, it is followed as before.
	m, _ = m.Update(keyPress("down"))
	picked := selectedKey(m)
	s2 := tuitest.Snapshot()
	m.SetSnapshot(&s2)
	if diff := cmp.Diff(picked, selectedKey(m)); diff != "" {
		t.Errorf("picked row not followed (-want +got)\n%s", diff)
	}
	// Home goes back to watching the top.
	m, _ = m.Update(keyPress("home"))
	m.SetSnapshot(&s)
	if diff := cmp.Diff(ThreadKey(4244), selectedKey(m)); diff != "" {
		t.Errorf("after Home (-want +got)\n%s", diff)
	}
}

// At 80 columns a hot row's reason is whole, a load row's too.
func TestWhyWholeAt80(t *testing.T) {
	m := newTable(80, 10)
	s := tuitest.Snapshot()
	s.Threads[0].Why = model.Why{Kind: model.Preempted, HasWait: true, Wait: 100}
	s.Threads[1].Why = model.Why{Kind: model.Blocking, HasWait: true, Wait: 9}
	m.SetSnapshot(&s)
	m.SetLoad(func(pid, tid int) bool { return tid == 4244 })
	got := tuitest.Render(t, m.View(), colorprofile.NoTTY)
	for _, want := range []string{"preempted, wait 100%", "load: blocking, wait 9%", "pool-1-thread-1"} {
		if !strings.Contains(got, want) {
			t.Errorf("80 columns lack %q:\n%s", want, got)
		}
	}
}

// Sorting cycles through the columns on screen only, and a column the
// width hides gives the sort back to TOTAL/s.
func TestSortOnlyByVisibleColumns(t *testing.T) {
	m := newTable(40, 10) // PID TID COMM TOTAL/s
	var seen []Column
	for range 5 {
		m.SortBy(+1)
		c, _ := m.Sort()
		seen = append(seen, c)
	}
	if diff := cmp.Diff([]Column{ColPID, ColTID, ColComm, ColTotal, ColPID}, seen); diff != "" {
		t.Errorf("> at 40 columns (-want +got)\n%s", diff)
	}
	m = newTable(120, 10)
	m.SortBy(-1)
	m.SortBy(-1)
	m.SortBy(-1) // TOTAL -> NVCSW -> CSW -> COMM
	m.SortBy(+1)
	m.SortBy(+1)
	m.SortBy(+1)
	m.SortBy(+1)
	m.SortBy(+1) // -> CSW NVCSW TOTAL %CPU WAIT%
	if c, _ := m.Sort(); c != ColWait {
		t.Fatalf("sort column %v, want WAIT%%", c)
	}
	m.SetSize(80, 10)
	if c, _ := m.Sort(); c != ColTotal {
		t.Errorf("after shrinking to 80, sort column %v, want TOTAL/s", c)
	}
	if head := tuitest.Render(t, strings.Split(m.View(), "\n")[0], colorprofile.NoTTY); !strings.Contains(head, "▼TOTAL/s") {
		t.Errorf("no sort marker on screen: %q", head)
	}
}

// Equal keys fall back to the IDs as numbers: TID 9654 before 12137.
func TestSortTiesNumeric(t *testing.T) {
	m := New(theme.New(true, true), keys.New(), 1000)
	m.SetSize(80, 10)
	s := tuitest.Snapshot()
	s.Threads = s.Threads[:2]
	s.Threads[0].PID, s.Threads[0].TID = 9000, 12137
	s.Threads[1].PID, s.Threads[1].TID = 9000, 9654
	s.Threads[1].VoluntaryPerSec, s.Threads[1].InvoluntaryPerSec = s.Threads[0].VoluntaryPerSec, s.Threads[0].InvoluntaryPerSec
	m.SetSnapshot(&s)
	var got []int
	for _, r := range m.Rows() {
		got = append(got, r.TID)
	}
	if diff := cmp.Diff([]int{9654, 12137}, got); diff != "" {
		t.Errorf("tie order (-want +got)\n%s", diff)
	}
}

// The switches no thread row holds have a line of their own at the bottom,
// aligned with TOTAL/s, so the rows add up to the header's cs/s.
func TestRemainderLine(t *testing.T) {
	m := newTable(80, 12)
	lines := strings.Split(tuitest.Render(t, m.View(), colorprofile.NoTTY), "\n")
	if len(lines) != 12 {
		t.Fatalf("%d lines, want the full 12", len(lines))
	}
	last := lines[len(lines)-1]
	for _, want := range []string{"(no thread row)", "27,125", "new/exited tasks, idle"} {
		if !strings.Contains(last, want) {
			t.Errorf("last line %q lacks %q", last, want)
		}
	}
	col := func(line, s string) int { return utf8.RuneCountInString(line[:strings.Index(line, s)+len(s)]) }
	if a, b := col(lines[0], "TOTAL/s"), col(last, "27,125"); a != b {
		t.Errorf("remainder ends at column %d, TOTAL/s at %d:\n%s\n%s", b, a, lines[0], last)
	}
	// Too small a table keeps its rows instead.
	m = newTable(80, 7)
	if v := m.View(); strings.Contains(v, "no thread row") {
		t.Errorf("7-line table shows the remainder:\n%s", v)
	}
}

// The remainder line stays when it is 0: with a load running, the threads
// (read after /proc/stat) sum past the header about one refresh in three,
// the model gives 0, and the line used to vanish for that refresh. Only a
// snapshot of some processes (--pid) has no remainder to show.
func TestRemainderLineStaysAtZero(t *testing.T) {
	for _, c := range []struct {
		name    string
		partial bool
		want    bool
	}{
		{"whole host, rows past the header", false, true},
		{"--pid", true, false},
	} {
		m := New(theme.New(true, true), keys.New(), 1000)
		m.SetSize(80, 16)
		s := tuitest.Snapshot()
		s.UnattributedPerSec, s.Partial = 0, c.partial
		m.SetSnapshot(&s)
		lines := strings.Split(tuitest.Render(t, m.View(), colorprofile.NoTTY), "\n")
		last := lines[len(lines)-1]
		if got := strings.Contains(last, "(no thread row)"); got != c.want {
			t.Errorf("%s: remainder line shown %v, want %v; last line %q", c.name, got, c.want, last)
		}
		if c.want && !strings.Contains(last, " 0 ") {
			t.Errorf("%s: remainder line %q, want a TOTAL/s of 0", c.name, last)
		}
		if n := len(lines); c.want && n != 16 {
			t.Errorf("%s: %d lines, want 16, the remainder on the last", c.name, n)
		}
	}
}

// Grouping keeps a lone kernel thread's own name, and kworkers of every
// CPU and queue, each a process of its own, make one kworker/* row.
func TestGroupKernelThreads(t *testing.T) {
	m := New(theme.New(true, true), keys.New(), 1000)
	m.SetSize(120, 20)
	s := tuitest.Snapshot()
	kt := func(pid int, comm string, vol float64) model.ThreadRates {
		return model.ThreadRates{PID: pid, TID: pid, Comm: comm, ProcessComm: comm, VoluntaryPerSec: vol, CPUsAllowed: "0"}
	}
	s.Threads = append(s.Threads, kt(11, "kworker/0:1-events", 40), kt(33, "kworker/u8:1-flush-252:0", 20),
		kt(54, "kworker/0:1H-kblockd", 10), kt(14, "ksoftirqd/0", 8), kt(15, "rcu_preempt", 50))
	m.SetSnapshot(&s)
	m.SetGrouped(true)
	byComm := map[string]Row{}
	for _, r := range m.Rows() {
		byComm[r.Comm] = r
	}
	kw, ok := byComm["kworker/*"]
	if !ok {
		t.Fatalf("no kworker/* row in %v", m.Rows())
	}
	type sums struct {
		Count, PID, TID int
		Voluntary       float64
	}
	got := sums{Count: kw.Count, Voluntary: kw.Vals[fields.Voluntary], PID: kw.PID, TID: kw.TID}
	if diff := cmp.Diff(sums{Count: 3, Voluntary: 70}, got); diff != "" {
		t.Errorf("kworker/* group (-want +got)\n%s", diff)
	}
	for _, name := range []string{"ksoftirqd/0", "rcu_preempt", "systemd"} {
		r, ok := byComm[name]
		if !ok || r.Grouped || r.TID == 0 {
			t.Errorf("lone %s should keep its own row and name: %+v (found %v)", name, r, ok)
		}
	}
	if _, ok := byComm["ksoftirqd/*"]; ok {
		t.Errorf("a one-member pattern was shown as a pattern")
	}
}

// In the process view the TID column is THR: it sorts by thread count.
func TestSortProcessesByThreads(t *testing.T) {
	m := newTable(120, 20)
	m.SetProcesses(true)
	m.SortBy(-1)
	m.SortBy(-1)
	m.SortBy(-1)
	m.SortBy(-1) // TOTAL -> NVCSW -> CSW -> COMM -> THR
	if c, _ := m.Sort(); c != ColTID {
		t.Fatalf("sort column %v, want THR", c)
	}
	var got []int
	for _, r := range m.Rows() {
		got = append(got, r.Count)
	}
	if diff := cmp.Diff([]int{1, 1, 4, 40}, got); diff != "" {
		t.Errorf("process rows by THR (-want +got)\n%s", diff)
	}
}

func TestViewCgroups(t *testing.T) {
	for _, sz := range tuitest.Sizes {
		t.Run(sz.Name, func(t *testing.T) {
			m := New(theme.New(false, true), keys.New(), 1000)
			m.SetSize(sz.Width, sz.Height-5)
			s := tuitest.WithCgroups()
			m.SetSnapshot(&s)
			m.CycleMode()
			m.CycleMode()
			if m.Mode() != ModeCgroups {
				t.Fatalf("two cycles from threads: mode %v, want cgroups", m.Mode())
			}
			got := tuitest.Render(t, m.View(), colorprofile.Ascii)
			tuitest.CheckFits(t, got, sz.Width, sz.Height-5)
			tuitest.Golden(t, sz.Name, got)
		})
	}
}

func TestCgroupFilterAndCycle(t *testing.T) {
	m := New(theme.New(true, true), keys.New(), 1000)
	m.SetSize(120, 20)
	s := tuitest.WithCgroups()
	m.SetSnapshot(&s)
	m.SetCgroupFilter(tuitest.PodCgroup)
	var got []string
	for _, r := range m.Rows() {
		got = append(got, r.Comm)
	}
	if diff := cmp.Diff([]string{"pool-1-thread-1", "pool-1-thread-2", "pool-1-thread-3"}, got); diff != "" {
		t.Errorf("threads of the pod (-want +got)\n%s", diff)
	}
	m.SetCgroupFilter("")
	var modes []Mode
	for range 4 {
		m.CycleMode()
		modes = append(modes, m.Mode())
	}
	if diff := cmp.Diff([]Mode{ModeProcesses, ModeCgroups, ModeThreads, ModeProcesses}, modes); diff != "" {
		t.Errorf("H cycle (-want +got)\n%s", diff)
	}
	m.SetCgroups(true)
	m.SetProcesses(false)
	if m.Mode() != ModeThreads {
		t.Errorf("SetProcesses(false) from cgroups: mode %v, want threads", m.Mode())
	}
	// A snapshot without cgroups says why the list is empty.
	plain := tuitest.Snapshot()
	m.SetSnapshot(&plain)
	m.SetCgroups(true)
	if v := m.View(); !strings.Contains(v, "cgroups unknown here") {
		t.Errorf("no cgroups known, view:\n%s", v)
	}
}
