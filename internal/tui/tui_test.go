package tui

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pace"
	"github.com/ctxtop/ctxtop/internal/tui/table"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// fakeSource returns fixed snapshots and counts calls, flagging overlap.
type fakeSource struct {
	mu      sync.Mutex
	calls   int
	busy    bool
	overlap bool
	err     error
	snaps   []model.Snapshot
}

func (f *fakeSource) Next() (model.Snapshot, error) {
	f.mu.Lock()
	if f.busy {
		f.overlap = true
	}
	f.busy = true
	f.calls++
	n := f.calls
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.busy = false; f.mu.Unlock() }()
	if f.err != nil {
		return model.Snapshot{}, f.err
	}
	if len(f.snaps) == 0 {
		return tuitest.Snapshot(), nil
	}
	return f.snaps[min(n-1, len(f.snaps)-1)], nil
}

func press(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func newRoot(t *testing.T, src Source, w, h int) Model {
	t.Helper()
	m := New(Options{Source: src, Interval: time.Second, HotThreshold: 1000, NoColor: true, Version: "test", FixedBackground: true}, "db-7", "6.18.0")
	return m.handleResize(w, h)
}

// step feeds msg to the model and runs the returned commands that do not
// wait on a timer, feeding their messages back, as the program would.
func step(t *testing.T, m Model, msg tea.Msg) (Model, []tea.Msg) {
	t.Helper()
	return stepWithin(t, m, msg, 50*time.Millisecond)
}

// stepWithin is step taking a command that has not answered within d for
// one that waits on a timer.
func stepWithin(t *testing.T, m Model, msg tea.Msg, d time.Duration) (Model, []tea.Msg) {
	t.Helper()
	next, cmd := m.Update(msg)
	m = next.(Model)
	var out []tea.Msg
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		r := runWithin(c, d)
		switch r := r.(type) {
		case nil:
		case tea.BatchMsg:
			queue = append(queue, r...)
		case sampleMsg:
			next, cmd := m.Update(r)
			m = next.(Model)
			queue = append(queue, cmd)
			out = append(out, r)
		default:
			out = append(out, r)
		}
	}
	return m, out
}

// runWithin runs c unless it blocks longer than d (a tick): then nil.
func runWithin(c tea.Cmd, d time.Duration) tea.Msg {
	ch := make(chan tea.Msg, 1)
	go func() { ch <- c() }()
	select {
	case msg := <-ch:
		return msg
	case <-time.After(d):
		return nil
	}
}

func sampled(t *testing.T, m Model) Model {
	t.Helper()
	// The sampling command answers at once on a quiet host; beside busy
	// loops it may wait for a CPU longer than step allows. The next tick
	// is a second away, still later than this.
	m, _ = stepWithin(t, m, tickMsg{gen: m.tickGen}, 500*time.Millisecond)
	if m.snap == nil {
		t.Fatal("no snapshot after a tick")
	}
	return m
}

func selected(m Model) table.Row {
	r, _ := m.table.Selected()
	return r
}

func TestTickSamplesAndRendersWithinSize(t *testing.T) {
	src := &fakeSource{}
	for _, sz := range tuitest.Sizes {
		m := sampled(t, newRoot(t, src, sz.Width, sz.Height))
		got := tuitest.Render(t, m.Render(), colorprofile.Ascii)
		tuitest.CheckFits(t, got, sz.Width, sz.Height)
		if n := strings.Count(got, "\n") + 1; n != sz.Height {
			t.Errorf("%s: %d lines, want the full height %d", sz.Name, n, sz.Height)
		}
		tuitest.Golden(t, sz.Name, got)
	}
}

func TestResizeNeverGarbles(t *testing.T) {
	m := sampled(t, newRoot(t, &fakeSource{}, 80, 24))
	for _, v := range []viewKey{{"", viewTable}, {"c", viewPerCPU}, {"?", viewHelp}} {
		m.view = v.view
		for w := 20; w <= 160; w += 13 {
			for h := 4; h <= 50; h += 7 {
				m = m.handleResize(w, h)
				tuitest.CheckFits(t, m.Render(), w, h)
			}
		}
	}
}

type viewKey struct {
	key  string
	view view
}

func TestFilterKeys(t *testing.T) {
	m := sampled(t, newRoot(t, &fakeSource{}, 80, 24))
	for _, k := range []string{"/", "p", "o", "o", "x", "backspace"} {
		m, _ = step(t, m, press(k))
	}
	if !m.filtering || m.table.Filter() != "poo" {
		t.Fatalf("filtering=%v filter=%q, want typing poo", m.filtering, m.table.Filter())
	}
	if n := len(m.table.Rows()); n != 3 {
		t.Errorf("filter poo: %d rows, want the 3 pool threads", n)
	}
	// q while typing is text, not quit.
	m, msgs := step(t, m, press("q"))
	for _, msg := range msgs {
		if _, ok := msg.(tea.QuitMsg); ok {
			t.Fatal("q in the filter quit")
		}
	}
	m, _ = step(t, m, press("backspace"))
	m, _ = step(t, m, press("enter"))
	if m.filtering || m.table.Filter() != "poo" {
		t.Errorf("Enter should keep the filter: filtering=%v %q", m.filtering, m.table.Filter())
	}
	if !strings.Contains(m.Render(), "/poo") {
		t.Errorf("kept filter not shown in the header:\n%s", m.Render())
	}
	m, _ = step(t, m, press("esc"))
	if m.table.Filter() != "" {
		t.Errorf("Esc should clear the filter, got %q", m.table.Filter())
	}
	m, _ = step(t, m, press("/"))
	m, _ = step(t, m, press("4"))
	m, _ = step(t, m, press("esc"))
	if m.filtering || m.table.Filter() != "" {
		t.Errorf("Esc while typing clears: filtering=%v %q", m.filtering, m.table.Filter())
	}
}

func TestSortToggleGroupKeys(t *testing.T) {
	m := sampled(t, newRoot(t, &fakeSource{}, 120, 40))
	m, _ = step(t, m, press("<"))
	if c, _ := m.table.Sort(); c != table.ColInvoluntary {
		t.Errorf("< from TOTAL: %v, want NVCSW", c)
	}
	m, _ = step(t, m, press(">"))
	m, _ = step(t, m, press("r"))
	if c, rev := m.table.Sort(); c != table.ColTotal || !rev {
		t.Errorf("> then r: %v reversed=%v", c, rev)
	}
	if rows := m.table.Rows(); rows[0].Comm != "a-process-with-a-very-long-name" {
		t.Errorf("reversed TOTAL should put the quietest first, got %s", rows[0].Comm)
	}
	m, _ = step(t, m, press("H"))
	if !m.table.Processes() || !strings.Contains(m.Render(), "THR") {
		t.Errorf("H should show processes")
	}
	m, _ = step(t, m, press("H"))
	if !m.table.Cgroups() {
		t.Errorf("H twice should show cgroups")
	}
	m, _ = step(t, m, press("H"))
	m, _ = step(t, m, press("g"))
	if !m.table.Grouped() || !strings.Contains(m.Render(), "pool-*-thread-*") {
		t.Errorf("g should group the pool:\n%s", m.Render())
	}
}

func TestPauseStopsSamplingAndResumeSamplesAtOnce(t *testing.T) {
	src := &fakeSource{}
	m := sampled(t, newRoot(t, src, 80, 24))
	m, _ = step(t, m, press("space"))
	if !m.paused || !strings.Contains(m.Render(), "PAUSED") {
		t.Fatalf("space should pause")
	}
	calls := src.calls
	m, _ = step(t, m, tickMsg{gen: m.tickGen})
	if src.calls != calls {
		t.Errorf("a tick while paused sampled")
	}
	m, _ = step(t, m, press("space"))
	if m.paused || src.calls != calls+1 {
		t.Errorf("resume: paused=%v calls=%d, want one immediate sample", m.paused, src.calls-calls)
	}
	// A tick from before the pause must not start a second sample.
	m, _ = step(t, m, tickMsg{gen: m.tickGen - 1})
	if src.calls != calls+1 {
		t.Errorf("stale tick sampled")
	}
	if src.overlap {
		t.Errorf("Source.Next calls overlapped")
	}
}

func TestIntervalSteps(t *testing.T) {
	m := newRoot(t, &fakeSource{}, 80, 24)
	for _, c := range []struct {
		key  string
		want time.Duration
	}{{"+", 2 * time.Second}, {"+", 5 * time.Second}, {"+", 10 * time.Second}, {"+", 10 * time.Second}, {"-", 5 * time.Second}, {"-", 2 * time.Second}, {"-", time.Second}, {"-", 500 * time.Millisecond}, {"-", 250 * time.Millisecond}, {"-", 250 * time.Millisecond}} {
		m, _ = step(t, m, press(c.key))
		if m.interval != c.want {
			t.Errorf("after %s: %v, want %v", c.key, m.interval, c.want)
		}
	}
	if got := stepInterval(1300*time.Millisecond, +1); got != 2*time.Second {
		t.Errorf("from an odd -d 1.3s, + gives %v", got)
	}
}

func TestDetailFollowsThreadAndEscReturns(t *testing.T) {
	src := &fakeSource{}
	m := sampled(t, newRoot(t, src, 80, 24))
	m, _ = step(t, m, press("down"))
	m, _ = step(t, m, press("down"))
	m, _ = step(t, m, press("enter"))
	if m.view != viewDetail || m.detail.TID() != 911 {
		t.Fatalf("Enter on pool-1-thread-1: view %v tid %d", m.view, m.detail.TID())
	}
	if !strings.Contains(m.Render(), "thread 911") {
		t.Errorf("detail view:\n%s", m.Render())
	}
	m = sampled(t, m)
	if vol, _ := m.hist.series(911); len(vol) != 2 {
		t.Errorf("history after two samples: %d points", len(vol))
	}
	m, _ = step(t, m, press("down"))
	if m.detail.TID() != 912 {
		t.Errorf("↓ in detail shows the next thread, got %d", m.detail.TID())
	}
	m, _ = step(t, m, press("esc"))
	if m.view != viewTable || selected(m).TID != 912 {
		t.Errorf("Esc: view %v selected %d", m.view, selected(m).TID)
	}
	// Enter on a process row drills into its threads.
	m, _ = step(t, m, press("H"))
	m, _ = step(t, m, press("enter"))
	if m.table.Processes() || m.table.Filter() != "4242" {
		t.Errorf("Enter on a process: processes=%v filter=%q", m.table.Processes(), m.table.Filter())
	}
}

func TestHistoryForgetsGoneThreads(t *testing.T) {
	h := newThreadHistory()
	s := tuitest.Snapshot()
	h.add(1, &s, 0)
	empty := model.Snapshot{}
	for n := 2; n <= forgetAfter+2; n++ {
		h.add(n, &empty, 911)
	}
	if _, ok := h.byTID[911]; !ok {
		t.Errorf("the thread shown in detail was forgotten")
	}
	if h.len() != 1 {
		t.Errorf("%d threads remembered, want only the one kept", h.len())
	}
	vol, _ := h.series(911)
	if len(vol) != min(forgetAfter+2, historyLen) || vol[len(vol)-1] != 0 {
		t.Errorf("idle samples should be zeros: len %d", len(vol))
	}
}

func TestQuitKeysAndFatalError(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		_, cmd := newRoot(t, &fakeSource{}, 80, 24).Update(press(k))
		if cmd == nil {
			t.Fatalf("%s: no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Errorf("%s does not quit", k)
		}
	}
	gone := errors.New("targets gone")
	src := &fakeSource{err: gone}
	m := newRoot(t, src, 80, 24)
	m, msgs := step(t, m, tickMsg{gen: m.tickGen})
	quit := false
	for _, msg := range msgs {
		_, quit = msg.(tea.QuitMsg)
	}
	if !quit || !errors.Is(m.exitErr, gone) {
		t.Errorf("a sampling error should end the monitor with it: quit=%v err=%v", quit, m.exitErr)
	}
	// With a classifier, other errors are shown and retried.
	m = New(Options{Source: src, IsFatal: func(err error) bool { return false }, NoColor: true, FixedBackground: true}, "h", "k").handleResize(80, 24)
	m, _ = step(t, m, tickMsg{gen: m.tickGen})
	if m.exitErr != nil || !strings.Contains(m.Render(), "sampling failed: targets gone") {
		t.Errorf("non-fatal error: exitErr=%v\n%s", m.exitErr, m.Render())
	}
}

func TestFooterShowsSelfCost(t *testing.T) {
	m := sampled(t, newRoot(t, &fakeSource{}, 120, 40))
	if !strings.Contains(m.Render(), "self 0.3% 4 cs/s") {
		t.Errorf("footer lacks own cost:\n%s", m.Render())
	}
}

// Going from 10 s to 250 ms must not wait for the tick set for 10 s.
func TestIntervalChangeReschedulesAtOnce(t *testing.T) {
	m := sampled(t, newRoot(t, &fakeSource{}, 80, 24))
	for range 5 {
		m, _ = step(t, m, press("+"))
	}
	if m.interval != 10*time.Second {
		t.Fatalf("interval %v, want 10s", m.interval)
	}
	var cmd tea.Cmd
	for m.interval > 250*time.Millisecond {
		next, c := m.Update(press("-"))
		m, cmd = next.(Model), c
	}
	if cmd == nil {
		t.Fatal("changing the interval scheduled nothing: the old 10 s tick stays in charge")
	}
	got := runWithin(cmd, 2*time.Second)
	if diff := cmp.Diff(tickMsg{gen: m.tickGen}, got, cmp.AllowUnexported(tickMsg{})); diff != "" {
		t.Errorf("tick within 2 s of choosing 250 ms (-want +got)\n%s", diff)
	}
}

// The footer names what a toggle switches to, not what is on screen.
func TestFooterSaysTheModeItSwitchesTo(t *testing.T) {
	m := sampled(t, newRoot(t, &fakeSource{}, 120, 40))
	footer := func() string { lines := strings.Split(ansi.Strip(m.Render()), "\n"); return lines[len(lines)-1] }
	for _, want := range []string{"H processes", "g group"} {
		if !strings.Contains(footer(), want) {
			t.Errorf("thread view footer lacks %q: %q", want, footer())
		}
	}
	m, _ = step(t, m, press("H"))
	m, _ = step(t, m, press("g"))
	for _, want := range []string{"H cgroups", "g ungroup"} {
		if !strings.Contains(footer(), want) {
			t.Errorf("grouped process view footer lacks %q: %q", want, footer())
		}
	}
	m, _ = step(t, m, press("H"))
	if !strings.Contains(footer(), "H threads") {
		t.Errorf("cgroup view footer lacks %q: %q", "H threads", footer())
	}
}

// m in the load panel reaches every mode the Loader has (the composition
// root's Loader has every mode of the load package: its tests check).
func TestLoadPanelReachesEveryMode(t *testing.T) {
	var want []string
	for _, md := range registryModes {
		want = append(want, md.Name)
	}
	m := New(Options{Source: &fakeSource{}, Interval: time.Second, NoColor: true, FixedBackground: true, Load: &registryLoader{}}, "h", "k").handleResize(100, 30)
	m, _ = step(t, m, press("L"))
	seen := map[string]bool{}
	for range len(want) {
		seen[m.load.modeName()] = true
		m, _ = step(t, m, press("m"))
	}
	var got []string
	for _, name := range want {
		if seen[name] {
			got = append(got, name)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modes m reached (-want +got)\n%s", diff)
	}
}

// The monitor paces as batch and record do (pace.Pacer): a sample that
// took longer than an interval skips the tick it missed rather than fire
// it late, the grid holds however long each sample took, and no tick
// comes sooner than half an interval after the last sample began.
func TestTicksKeepToTheGrid(t *testing.T) {
	for _, c := range []struct {
		name         string
		start, taken time.Duration // before now
		want         time.Duration // after start
	}{
		{"a slow sample skips the tick it missed", 2300 * time.Millisecond, 1200 * time.Millisecond, 3 * time.Second},
		{"on time, the next tick of the grid", 1100 * time.Millisecond, 100 * time.Millisecond, 2 * time.Second},
		{"a tick too close to the last sample is skipped", 800 * time.Millisecond, 100 * time.Millisecond, 2 * time.Second},
	} {
		m := newRoot(t, &fakeSource{}, 80, 24)
		now := time.Now()
		start := now.Add(-c.start)
		m.pace = pace.New(time.Second, start)
		m.taken = now.Add(-c.taken)
		m.inFlight = true
		next, _ := m.handleSample(sampleMsg{})
		if got := next.(Model).nextTick.Sub(start); got != c.want {
			t.Errorf("%s: next tick %v after the grid's start, want %v", c.name, got, c.want)
		}
	}
}

// A new interval counts from the last sample: its first tick is one new
// interval after it, or at once when that has passed, and the grid goes
// on from there.
func TestIntervalChangeCountsFromTheLastSample(t *testing.T) {
	m := newRoot(t, &fakeSource{}, 80, 24)
	m.taken = time.Now().Add(-300 * time.Millisecond)
	next, _ := m.setInterval(2 * time.Second)
	m = next.(Model)
	if got := m.nextTick.Sub(m.taken); got != 2*time.Second {
		t.Errorf("2 s chosen 300 ms after a sample: next tick %v after it, want 2s", got)
	}
	before := time.Now()
	m.taken = before.Add(-3 * time.Second)
	next, _ = m.setInterval(500 * time.Millisecond)
	m = next.(Model)
	if m.nextTick.Before(before) || m.nextTick.After(time.Now()) {
		t.Errorf("500 ms chosen 3 s after a sample: next tick %v from now, want now", time.Until(m.nextTick))
	}
}
