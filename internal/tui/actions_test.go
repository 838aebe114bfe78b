package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/procctl"
	"github.com/ctxtop/ctxtop/internal/settings"
	"github.com/ctxtop/ctxtop/internal/tui/table"
)

// recordedActions stands in for the kernel: the fixture's PIDs are made
// up, and must never be signalled for real. The kernel side is procctl's,
// tested on real processes, and the tmux test's.
type recordedActions struct {
	calls []string
	err   error
}

func (a *recordedActions) Signal(t procctl.Target, s procctl.Signal) (string, error) {
	a.calls = append(a.calls, fmt.Sprintf("signal %s %d/%d", s.Name, t.PID, t.TID))
	return "sent SIG" + s.Name + " to " + t.String(), a.err
}

func (a *recordedActions) SetAffinity(t procctl.Target, cpus []int) (string, error) {
	a.calls = append(a.calls, fmt.Sprintf("affinity %v %d/%d", cpus, t.PID, t.TID))
	return t.String() + " now runs on CPUs " + procctl.FormatCPUs(cpus), a.err
}

func (a *recordedActions) Renice(t procctl.Target, d int) (string, error) {
	a.calls = append(a.calls, fmt.Sprintf("renice %+d %d/%d", d, t.PID, t.TID))
	return fmt.Sprintf("%s: nice 0 → %d", t, d), a.err
}

func actionRoot(t *testing.T, a Actions, o Options) Model {
	t.Helper()
	o.Source, o.HotThreshold, o.NoColor, o.FixedBackground = &fakeSource{}, 1000, true, true
	if o.Interval == 0 {
		o.Interval = time.Second
	}
	o.Actions = a
	m := New(o, "db-7", "6.18.0")
	return sampled(t, m.handleResize(80, 24))
}

func fkey(n int) tea.KeyPressMsg { return tea.KeyPressMsg{Code: tea.KeyF1 + rune(n-1)} }

// footerOf is the screen's last line, without styles.
func footerOf(m Model) string {
	lines := strings.Split(ansi.Strip(m.Render()), "\n")
	return lines[len(lines)-1]
}

func TestSignalAsksThenSends(t *testing.T) {
	a := &recordedActions{}
	m := actionRoot(t, a, Options{})
	// The top row: pp-ping, thread 4243 of 4242.
	m, _ = step(t, m, fkey(9))
	if got := footerOf(m); !strings.HasPrefix(got, "send SIGTERM to thread 4243 pp-ping (of 4242)?  Enter yes  Esc no  ←/→ signal") {
		t.Errorf("F9 footer %q; want the target and SIGTERM named, the choices after", got)
	}
	if len(a.calls) != 0 {
		t.Fatalf("F9 acted before Enter: %v", a.calls)
	}
	m, _ = step(t, m, press("right"))
	if got := footerOf(m); !strings.HasPrefix(got, "send SIGKILL to thread 4243") {
		t.Errorf("→ in the picker: footer %q, want SIGKILL", got)
	}
	// q in the picker is no, not quit.
	m, msgs := step(t, m, press("q"))
	for _, msg := range msgs {
		if _, ok := msg.(tea.QuitMsg); ok {
			t.Fatal("q in the signal picker quit the monitor")
		}
	}
	if got := footerOf(m); !strings.HasPrefix(got, "no signal sent") {
		t.Errorf("after q in the picker: footer %q", got)
	}
	m, _ = step(t, m, fkey(9))
	m, _ = step(t, m, press("left")) // wraps to USR2
	m, _ = step(t, m, press("enter"))
	if diff := cmp.Diff([]string{"signal USR2 4242/4243"}, a.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if got := footerOf(m); !strings.HasPrefix(got, "sent SIGUSR2 to thread 4243 pp-ping (of 4242)") {
		t.Errorf("after Enter: footer %q, want what was done", got)
	}
	// The next key clears it.
	m, _ = step(t, m, press("down"))
	if got := footerOf(m); strings.Contains(got, "SIGUSR2") {
		t.Errorf("the status outlived the next key: %q", got)
	}
}

func TestSignalToAProcessRow(t *testing.T) {
	a := &recordedActions{}
	m := actionRoot(t, a, Options{})
	m, _ = step(t, m, press("H"))
	m, _ = step(t, m, fkey(9))
	if got := footerOf(m); !strings.HasPrefix(got, "send SIGTERM to process 4242 pingpong?") {
		t.Errorf("F9 on a process row: footer %q", got)
	}
	_, _ = step(t, m, press("enter"))
	if diff := cmp.Diff([]string{"signal TERM 4242/0"}, a.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestAffinityPrompt(t *testing.T) {
	a := &recordedActions{}
	m := actionRoot(t, a, Options{})
	m, _ = step(t, m, press("down")) // pp-pong
	m, _ = step(t, m, press("a"))
	if got := footerOf(m); !strings.HasPrefix(got, "CPUs for thread 4244 pp-pong (of 4242) (now 0): █") {
		t.Errorf("a: footer %q", got)
	}
	for _, k := range []string{"0", "-", "1"} {
		m, _ = step(t, m, press(k))
	}
	if len(a.calls) != 0 {
		t.Fatalf("typing acted before Enter: %v", a.calls)
	}
	m, _ = step(t, m, press("enter"))
	if diff := cmp.Diff([]string{"affinity [0 1] 4242/4244"}, a.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if got := footerOf(m); !strings.Contains(got, "now runs on CPUs 0-1") {
		t.Errorf("footer %q, want what was done", got)
	}
	// Junk is refused in words and nothing is done.
	m, _ = step(t, m, press("a"))
	m, _ = step(t, m, press("x"))
	m, _ = step(t, m, press("enter"))
	if len(a.calls) != 1 {
		t.Errorf("junk CPU list applied: %v", a.calls)
	}
	if got := footerOf(m); !strings.Contains(got, `affinity unchanged: "x" is not a CPU list`) {
		t.Errorf("footer %q, want the junk refused", got)
	}
	m, _ = step(t, m, press("a"))
	m, _ = step(t, m, press("esc"))
	if got := footerOf(m); !strings.HasPrefix(got, "affinity unchanged") || len(a.calls) != 1 {
		t.Errorf("Esc: footer %q, calls %v", got, a.calls)
	}
}

func TestNiceKeysAndRefusals(t *testing.T) {
	a := &recordedActions{}
	m := actionRoot(t, a, Options{})
	m, _ = step(t, m, fkey(8))
	m, _ = step(t, m, fkey(7))
	if diff := cmp.Diff([]string{"renice +1 4242/4243", "renice -1 4242/4243"}, a.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	a.err = errors.New("cannot set nice -1 for thread 4243: not permitted (EPERM): lowering nice, or another user's task, needs root or CAP_SYS_NICE")
	m, _ = step(t, m, fkey(7))
	if got := footerOf(m); !strings.HasPrefix(got, "cannot set nice -1 for thread 4243: not permitted (EPERM)") {
		t.Errorf("a refusal: footer %q", got)
	}
}

func TestActionsRefusedWhereTheyCannotBe(t *testing.T) {
	a := &recordedActions{}
	for name, c := range map[string]struct {
		m    func() Model
		want string
	}{
		"grouped": {func() Model {
			m := actionRoot(t, a, Options{})
			m, _ = step(t, m, press("g"))
			m, _ = step(t, m, press("down"))
			m, _ = step(t, m, press("down")) // the pool group
			return m
		}, "select a single thread or process: this row groups"},
		"cgroups": {func() Model {
			m := actionRoot(t, a, Options{})
			m, _ = step(t, m, press("H"))
			m, _ = step(t, m, press("H"))
			return m
		}, "no row selected"},
		"--proc": {func() Model {
			return actionRoot(t, nil, Options{NoActionsWhy: "not possible with --proc testdata/proc: its threads need not be this host's"})
		}, "not possible with --proc testdata/proc"},
	} {
		for _, k := range []tea.KeyPressMsg{fkey(9), press("a"), fkey(7), fkey(8)} {
			m, _ := step(t, c.m(), k)
			if got := footerOf(m); !strings.HasPrefix(got, c.want) {
				t.Errorf("%s, %s: footer %q, want %q", name, k, got, c.want)
			}
			if m.prompt.kind != promptNone {
				t.Errorf("%s, %s: a prompt opened", name, k)
			}
		}
	}
	if len(a.calls) != 0 {
		t.Errorf("refused actions were done: %v", a.calls)
	}
}

func TestActionsRefusedInAReplay(t *testing.T) {
	m, _ := replayRoot(t, 80, 24)
	for _, k := range []tea.KeyPressMsg{fkey(9), press("a"), fkey(7), fkey(8)} {
		m2, _ := step(t, m, k)
		if got := footerOf(m2); !strings.HasPrefix(got, "not possible in a replay") {
			t.Errorf("%s in a replay: footer %q", k, got)
		}
	}
}

func TestHtopKeys(t *testing.T) {
	m := actionRoot(t, &recordedActions{}, Options{})
	m, _ = step(t, m, fkey(1))
	if m.view != viewHelp {
		t.Errorf("F1: view %v, want help", m.view)
	}
	m, _ = step(t, m, press("x"))
	m, _ = step(t, m, fkey(3))
	if !m.filtering {
		t.Error("F3 does not open the filter")
	}
	m, _ = step(t, m, press("esc"))
	m, _ = step(t, m, fkey(5))
	if !m.table.TreeShown() || !strings.Contains(m.Render(), "tree") {
		t.Errorf("F5: tree shown %v; header:\n%s", m.table.TreeShown(), m.Render())
	}
	if r := selected(m); r.Key != table.ProcessKey(4242) {
		t.Errorf("the tree's top row is %s, want the busiest process", r.Key)
	}
	m, _ = step(t, m, press("left"))
	if r := selected(m); !r.Folded {
		t.Errorf("← on a process in the tree did not fold it: %+v", r)
	}
	m, _ = step(t, m, press("right"))
	if r := selected(m); r.Folded {
		t.Errorf("→ did not unfold it")
	}
	m, _ = step(t, m, press("t"))
	if m.table.TreeShown() {
		t.Error("t did not leave the tree")
	}
	_, msgs := step(t, m, fkey(10))
	quit := false
	for _, msg := range msgs {
		_, q := msg.(tea.QuitMsg)
		quit = quit || q
	}
	if !quit {
		t.Error("F10 does not quit")
	}
}

func TestMouseSelectsAndSorts(t *testing.T) {
	m := actionRoot(t, &recordedActions{}, Options{})
	top := m.header.Height() // the table's title line
	m, _ = step(t, m, tea.MouseClickMsg{X: 10, Y: top + 3, Button: tea.MouseLeft})
	if r := selected(m); r.Key != table.ThreadKey(911) {
		t.Errorf("a click on the third row selected %s", r.Key)
	}
	m, _ = step(t, m, tea.MouseClickMsg{X: 2, Y: top, Button: tea.MouseLeft})
	if c, rev := m.table.Sort(); c != table.ColPID || rev {
		t.Errorf("a click on PID: sort %v reversed %v", c, rev)
	}
	m, _ = step(t, m, tea.MouseClickMsg{X: 2, Y: top, Button: tea.MouseLeft})
	if _, rev := m.table.Sort(); !rev {
		t.Error("a second click on PID did not reverse it")
	}
	if !strings.Contains(ansi.Strip(m.Render()), "▼PID") {
		t.Errorf("the reversed PID is not marked:\n%s", ansi.Strip(m.Render()))
	}
	m, _ = step(t, m, tea.MouseWheelMsg{X: 10, Y: top + 2, Button: tea.MouseWheelDown})
	if r := selected(m); r.Key == table.ThreadKey(911) {
		t.Error("the wheel did not move the selection")
	}
}

func TestSettingsRestoreAndReport(t *testing.T) {
	want := settings.Settings{View: "processes", Tree: true, Sort: "CSW/s", Reverse: true, Filter: "java", Interval: "500ms"}
	m := actionRoot(t, nil, Options{Settings: want, Interval: 500 * time.Millisecond})
	if !m.table.Processes() || m.table.TreeShown() || m.table.Filter() != "java" {
		t.Errorf("restored: processes %v, tree shown %v, filter %q", m.table.Processes(), m.table.TreeShown(), m.table.Filter())
	}
	if c, rev := m.table.Sort(); c != table.ColVoluntary || !rev {
		t.Errorf("restored sort %v reversed %v", c, rev)
	}
	if diff := cmp.Diff(want, m.Settings()); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	m, _ = step(t, m, press("H")) // cgroups
	m, _ = step(t, m, press("H")) // threads: the tree kept shows again
	if !m.table.TreeShown() {
		t.Error("the tree kept in the settings does not show once rows are threads")
	}
	got := m.Settings()
	if got.View != "" || !got.Tree {
		t.Errorf("after H H: view %q tree %v, want threads (\"\") in a tree", got.View, got.Tree)
	}
}

func TestStatusExpires(t *testing.T) {
	m := actionRoot(t, &recordedActions{}, Options{})
	m, _ = step(t, m, fkey(8))
	m.status.at = time.Now().Add(-statusFor - time.Second)
	m, _ = step(t, m, tickMsg{gen: m.tickGen})
	if m.status.text != "" {
		t.Errorf("a status older than %v still shows after a sample: %q", statusFor, m.status.text)
	}
}
