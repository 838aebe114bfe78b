package tui_test

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ctxtop/ctxtop/internal/stacks"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// tmux runs one tmux server private to the test.
type tmux struct {
	t      testing.TB
	socket string
}

func (x tmux) run(args ...string) string {
	x.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", x.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		x.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (x tmux) pane() string { return x.run("capture-pane", "-p", "-t", "e2e") }

// ownConfig is an XDG_CONFIG_HOME=... setting for a tmux session: a
// directory of the test's own, so that the view one monitor saves on
// quitting (a filter, the processes view) never opens the next test's.
//
// Not t.TempDir: a monitor that the test's kill-server hangs up on saves
// its view as it exits, after the kill returned, and TempDir's removal
// then fails on the new file. This removal tries again for a while.
func ownConfig(t testing.TB) string {
	dir, err := os.MkdirTemp("", "ctxtop-e2e-config-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 20 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return "XDG_CONFIG_HOME=" + dir
}

// startTmux starts a tmux server private to the test, named after name,
// with a session "e2e" of w by h running cmd, sized by hand so that no
// client resizes it; the server is killed when the test ends.
func startTmux(t testing.TB, name string, w, h int, cmd string) tmux {
	t.Helper()
	x := tmux{t: t, socket: fmt.Sprintf("ctxtop-%s-%d", name, os.Getpid())}
	x.run("new-session", "-d", "-s", "e2e", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), "-e", ownConfig(t), cmd)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", x.socket, "kill-server").Run() })
	x.run("set-option", "-t", "e2e", "window-size", "manual")
	return x
}

// needTmuxAndStacks skips a test without tmux, or without the stack
// programs (root, BTF) outside CI; under CI, where both are installed,
// their absence fails it.
func needTmuxAndStacks(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	if err := stacks.Check(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("stack programs unavailable under CI: %v", err)
		}
		t.Skip(err)
	}
}

// waitFor polls the pane until ok accepts it or the deadline passes.
func (x tmux) waitFor(what string, ok func(string) bool) string {
	x.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		p := x.pane()
		if ok(p) {
			return p
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("timed out waiting for %s; the pane shows:\n%s", what, p)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func contains(s ...string) func(string) bool {
	return func(p string) bool {
		for _, x := range s {
			if !strings.Contains(p, x) {
				return false
			}
		}
		return true
	}
}

// checkFits fails when any pane line is wider than w or there are more than h.
func checkFits(t *testing.T, pane string, w, h int) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(pane, "\n"), "\n")
	if len(lines) > h {
		t.Errorf("%d lines in a %d-line pane", len(lines), h)
	}
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > w {
			t.Errorf("line %d is %d wide in a %d-column pane: %q", i, n, w, l)
		}
	}
}

func TestLiveMonitorInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; this end-to-end test drives the real terminal UI through it")
	}
	bin := testutil.Binary(t)
	ppid, _ := testutil.StartPingPong(t)
	pid := strconv.Itoa(ppid)

	x := startTmux(t, "e2e", 80, 24, "sh")
	x.run("send-keys", "-t", "e2e", "clear; "+bin+" -d 0.5; echo EXITED $?", "Enter")

	p := x.waitFor("the header and the workload's rows", contains("ctxtop", "cs/s", "pp-ping", "pp-pong", "TOTAL/s"))
	checkFits(t, p, 80, 24)

	x.run("send-keys", "-t", "e2e", "/", "pp-p", "Enter")
	p = x.waitFor("the filter to apply", contains("/pp-p"))
	rows := tableRows(p)
	if len(rows) < 2 {
		t.Fatalf("filter pp-p left %d rows:\n%s", len(rows), p)
	}
	// Go may run a workload thread on the main thread, so its process
	// name can be pp-ping too and every thread of it matches: the rows
	// must all be the workload's, or threads named pp-p* of another test
	// package's ping-pong running at the same time.
	for _, r := range rows {
		if f := strings.Fields(r); len(f) < 3 || (f[0] != pid && !strings.HasPrefix(f[2], "pp-p")) {
			t.Errorf("row %q is neither of the workload %s nor named pp-p*", r, pid)
		}
	}

	x.run("send-keys", "-t", "e2e", ">")
	// %CPU and WAIT% do not fit 80 columns: > wraps to PID, on screen.
	x.waitFor("sorting by PID, the next column on screen", contains("▲PID"))
	x.run("send-keys", "-t", "e2e", "<")
	x.waitFor("sorting by TOTAL/s again", contains("▼TOTAL/s"))

	// The filter names threads; clear it so the process row shows.
	x.run("send-keys", "-t", "e2e", "Escape")
	x.waitFor("the filter to clear", func(p string) bool { return !strings.Contains(p, "/pp-p") })
	x.run("send-keys", "-t", "e2e", "H")
	x.waitFor("the process view", contains("THR", " "+pid+" ", "processes"))

	x.run("resize-window", "-t", "e2e", "-x", "40", "-y", "10")
	p = x.waitFor("the 40x10 layout", func(p string) bool {
		return strings.HasPrefix(p, "ctxtop") && strings.Contains(p, " "+pid+" ") && maxWidth(p) <= 40
	})
	checkFits(t, p, 40, 10)
	x.run("resize-window", "-t", "e2e", "-x", "80", "-y", "24")
	x.waitFor("the 80x24 layout again", contains("IPI/s", " "+pid+" "))

	x.run("send-keys", "-t", "e2e", "q")
	p = x.waitFor("ctxtop to exit and the shell to return", contains("EXITED 0"))
	if strings.Contains(p, "TOTAL/s") {
		t.Errorf("the monitor's screen is still shown after exit; alt screen not left:\n%s", p)
	}
}

// tableRows are the pane lines between the table's header row and the footer.
func tableRows(pane string) []string {
	lines := strings.Split(strings.TrimRight(pane, "\n"), "\n")
	var rows []string
	in := false
	for i, l := range lines {
		if strings.Contains(l, "TOTAL/s") {
			in = true
			continue
		}
		if in && i < len(lines)-1 && strings.TrimSpace(l) != "" && !strings.Contains(l, "(no thread row)") {
			rows = append(rows, l)
		}
	}
	return rows
}

func maxWidth(p string) int {
	w := 0
	for _, l := range strings.Split(p, "\n") {
		w = max(w, utf8.RuneCountInString(l))
	}
	return w
}

// The load panel's workload must stay on screen while it runs: every one
// of 20 consecutive refreshes at 250 ms, at 80x24, shows both its threads.
func TestLoadPanelKeepsThreadsOnScreen(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; this end-to-end test drives the real terminal UI through it")
	}
	bin := testutil.Binary(t)
	x := startTmux(t, "e2e-load", 80, 24, "sh")
	x.run("send-keys", "-t", "e2e", "clear; "+bin+" -d 0.25; echo EXITED $?", "Enter")
	x.waitFor("the monitor", contains("TOTAL/s"))
	x.run("send-keys", "-t", "e2e", "L")
	x.waitFor("the load panel", contains("LOAD", "futex"))
	x.run("send-keys", "-t", "e2e", "s")
	both := func(p string) bool {
		ping, pong := false, false
		for _, r := range tableRows(p) {
			ping = ping || strings.Contains(r, "ping-futex")
			pong = pong || strings.Contains(r, "pong-futex")
		}
		return ping && pong
	}
	x.waitFor("the workload's rows", both)

	// A refresh moves the panel's elapsed time ("running 3.2s").
	elapsed := func(p string) string {
		i := strings.Index(p, "running ")
		if i < 0 {
			return ""
		}
		return strings.Fields(p[i+len("running "):])[0]
	}
	last, seen := "", 0
	deadline := time.Now().Add(30 * time.Second)
	for seen < 20 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d refreshes in 30 s", seen)
		}
		p := x.pane()
		e := elapsed(p)
		if e == "" || e == last {
			time.Sleep(40 * time.Millisecond)
			continue
		}
		last = e
		seen++
		if !both(p) {
			t.Fatalf("refresh %d (running %s) lost the workload's threads:\n%s", seen, e, p)
		}
		checkFits(t, p, 80, 24)
	}
	x.run("send-keys", "-t", "e2e", "s")
	x.waitFor("the workload to stop", contains("stopped"))
	x.run("send-keys", "-t", "e2e", "q")
	x.waitFor("ctxtop to exit", contains("EXITED 0"))
}
