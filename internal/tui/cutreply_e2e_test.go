package tui_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// Over SSH, or from a terminal starved of CPU, the reply to the monitor's
// background-colour query can come in two pieces, the second after the
// input reader's escape timeout. Its tail (`1c1c/1c1c/1c1c`) used to be
// read as typed keys: the monitor opened with a filter, a view or a sort
// nobody chose. tmux sends the two pieces here as the terminal would.
func TestCutTerminalReplyIsNotTyped(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; this end-to-end test drives the real terminal UI through it")
	}
	bin := testutil.Binary(t)
	x := startTmux(t, "cutreply", 80, 24, "sh")
	x.run("send-keys", "-t", "e2e", "clear; "+bin+" -d 0.5; echo EXITED $?", "Enter")
	x.waitFor("the monitor", contains("TID COMM", "▼TOTAL/s"))
	for _, reply := range [][2]string{
		{"1b 5d 31 31 3b 72 67", "b:1c1c/1c1c/1c1c\x1b\\"}, // OSC 11, ST
		{"1b 5d 31 31 3b", "rgb:ffff/ffff/ffff\a"},         // OSC 11, BEL
		{"1b 5b 3c 30 3b", "1;2M"},                         // an SGR mouse click on the header
	} {
		x.run(append([]string{"send-keys", "-t", "e2e", "-H"}, strings.Fields(reply[0])...)...)
		// Well past the reader's 50 ms escape timeout.
		time.Sleep(300 * time.Millisecond)
		x.run("send-keys", "-t", "e2e", "-l", reply[1])
	}
	time.Sleep(time.Second)
	p := x.pane()
	lines := strings.Split(strings.TrimRight(p, "\n"), "\n")
	for _, bad := range []string{"1c1c", "ffff", "filter \"", "Enter keep", "CPU  ", "grouped", "▲"} {
		if strings.Contains(p, bad) {
			t.Errorf("a cut reply acted as keys (%q on screen):\n%s", bad, p)
		}
	}
	if !strings.Contains(p, "TID COMM") || !strings.Contains(p, "▼TOTAL/s") {
		t.Errorf("not the default threads view sorted by TOTAL/s any more:\n%s", p)
	}
	if f := lines[len(lines)-1]; !strings.HasPrefix(f, "q quit") {
		t.Errorf("footer %q: want the keys", f)
	}
	// The user's keys still work, Escape included.
	x.run("send-keys", "-t", "e2e", "H")
	x.waitFor("the processes view", contains("THR"))
	x.run("send-keys", "-t", "e2e", "/", "zz")
	x.waitFor("the filter prompt", contains("/zz", "Esc clear"))
	x.run("send-keys", "-t", "e2e", "Escape")
	x.waitFor("the filter prompt closed by Escape", func(p string) bool { return !strings.Contains(p, "Esc clear") })
	x.run("send-keys", "-t", "e2e", "q")
	x.waitFor("the exit", contains("EXITED 0"))
}
