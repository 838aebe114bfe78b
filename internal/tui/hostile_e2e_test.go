package tui_test

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// Any user can name a thread with escape sequences. These tests run a real
// process whose threads carry hostile names (set with prctl(PR_SET_NAME))
// under the real monitor in tmux, and read back what the terminal ended up
// with: no sequence from a name may act (no clear, no colour, no title),
// no row may be split, and a wide name may not shift the columns.

// hostileTerm is a private tmux server holding one pane.
type hostileTerm struct {
	t      *testing.T
	socket string
}

func newHostileTerm(t *testing.T, w, h int, command string) hostileTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; this end-to-end test drives the real terminal UI through it")
	}
	x := hostileTerm{t: t, socket: fmt.Sprintf("ctxtop-hostile-%d-%d", os.Getpid(), time.Now().UnixNano())}
	x.run("new-session", "-d", "-s", "h", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h),
		"-e", "TERM=xterm-256color", "-e", "COLORTERM=truecolor", "-e", ownConfig(t), command)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", x.socket, "kill-server").Run() })
	x.run("set-option", "-t", "h", "window-size", "manual")
	x.run("set-option", "-t", "h", "remain-on-exit", "on")
	return x
}

func (x hostileTerm) run(args ...string) string {
	x.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", x.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		x.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (x hostileTerm) plain() string  { return x.run("capture-pane", "-p", "-t", "h") }
func (x hostileTerm) styled() string { return x.run("capture-pane", "-p", "-e", "-t", "h") }
func (x hostileTerm) keys(k ...string) {
	x.run(append([]string{"send-keys", "-t", "h"}, k...)...)
}

func (x hostileTerm) waitFor(what string, ok func(string) bool) string {
	x.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		p := x.plain()
		if ok(p) {
			return p
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("timed out waiting for %s; the pane shows:\n%s", what, p)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func hasAll(s ...string) func(string) bool {
	return func(p string) bool {
		for _, x := range s {
			if !strings.Contains(p, x) {
				return false
			}
		}
		return true
	}
}

var escSeq = regexp.MustCompile("\x1b(\\[[0-9;:]*[A-Za-z]|\\][^\x07\x1b]*(\x07|\x1b\\\\)?|.)")

// checkEscapes fails on any escape sequence in a capture-pane -e dump that
// did not come from the monitor's own styling: tmux writes only SGR there,
// so anything else, or a basic 8/16-colour SGR (the theme uses 256-colour
// or RGB values; -e writes those as 38;5 / 38;2), is a name acting on the
// terminal. With noColor no colour at all may appear.
func checkEscapes(t *testing.T, dump string, noColor bool) {
	t.Helper()
	for _, m := range escSeq.FindAllString(dump, -1) {
		if !strings.HasPrefix(m, "\x1b[") || !strings.HasSuffix(m, "m") {
			t.Errorf("escape sequence %q on screen: only SGR is the monitor's own", m)
			continue
		}
		params := strings.Split(strings.Trim(m[2:len(m)-1], ";"), ";")
		for i := 0; i < len(params); i++ {
			n, _ := strconv.Atoi(params[i])
			switch {
			case n == 38 || n == 48:
				if noColor {
					t.Errorf("colour %q on screen with --no-color", m)
				}
				// 38;5;N or 38;2;R;G;B: skip the arguments.
				if i+1 < len(params) && params[i+1] == "5" {
					i += 2
				} else if i+1 < len(params) && params[i+1] == "2" {
					i += 4
				}
			case n >= 30 && n <= 37, n >= 40 && n <= 47, n >= 90 && n <= 97, n >= 100 && n <= 107:
				t.Errorf("basic colour %q on screen: from a name, not the theme", m)
			}
		}
	}
}

// checkRows: each named thread is on exactly one line, showing its clean
// name, and the column after the name starts at the same cell on every row.
func checkRows(t *testing.T, pane string, tids []int) {
	t.Helper()
	lines := strings.Split(pane, "\n")
	if !strings.HasPrefix(lines[0], "ctxtop") {
		t.Errorf("first line %q: the header was cleared or overwritten", lines[0])
	}
	cell := -1
	for i, tid := range tids {
		var found []string
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 2 && f[1] == strconv.Itoa(tid) {
				found = append(found, l)
			}
		}
		if len(found) != 1 {
			t.Errorf("thread %d (%q) is on %d lines, want 1:\n%s", tid, testutil.HostileNames[i], len(found), pane)
			continue
		}
		l := found[0]
		if !strings.Contains(l, testutil.HostileNamesClean[i]) {
			t.Errorf("row of %q shows %q, want the name as %q", testutil.HostileNames[i], l, testutil.HostileNamesClean[i])
		}
		// The end of the first number after the name (no clean name has
		// a space), in terminal cells.
		f := strings.Fields(l)
		end := strings.Index(l, f[2]) + len(f[2])
		end += strings.Index(l[end:], f[3]) + len(f[3])
		if w := ansi.StringWidth(l[:end]); cell < 0 {
			cell = w
		} else if w != cell {
			t.Errorf("row of %q: the column after the name ends at cell %d, other rows at %d:\n%s", testutil.HostileNames[i], w, cell, pane)
		}
	}
}

func TestHostileThreadNamesInTmux(t *testing.T) {
	for _, noColor := range []bool{true, false} {
		t.Run(fmt.Sprintf("no-color=%v", noColor), func(t *testing.T) {
			bin := testutil.Binary(t)
			pid, tids := testutil.StartHostileNames(t)
			cmd := fmt.Sprintf("%s -d 0.5 -p %d", bin, pid)
			if noColor {
				cmd += " --no-color"
			}
			x := newHostileTerm(t, 100, 34, cmd)
			p := x.waitFor("every hostile thread's row", hasAll(testutil.HostileNamesClean...))
			checkRows(t, p, tids)
			checkEscapes(t, x.styled(), noColor)
			if title := x.run("display-message", "-p", "-t", "h", "#{pane_title}"); strings.Contains(title, "owned") {
				t.Errorf("a thread name set the window title to %q", title)
			}

			// One row per process: its name is the main thread's.
			x.keys("H")
			x.waitFor("the process row", hasAll(testutil.HostileProcessNameClean))
			checkEscapes(t, x.styled(), noColor)
			// H cycles on to cgroup rows, then back to threads.
			x.keys("H")
			x.waitFor("the cgroup rows", hasAll("CGROUP"))
			checkEscapes(t, x.styled(), noColor)
			x.keys("H")

			// Thread groups, then the detail view of the screen-clearing thread.
			x.keys("g")
			time.Sleep(700 * time.Millisecond)
			checkEscapes(t, x.styled(), noColor)
			x.keys("g")
			x.keys("/", "pwn", "Enter")
			x.waitFor("the filter", hasAll("?[2J?[Hpwn"))
			x.keys("Enter")
			time.Sleep(700 * time.Millisecond)
			p = x.plain()
			if !strings.Contains(p, "?[2J?[Hpwn") || !strings.HasPrefix(p, "ctxtop") {
				t.Errorf("detail view of the thread:\n%s", p)
			}
			checkEscapes(t, x.styled(), noColor)

			x.keys("q")
		})
	}
}
