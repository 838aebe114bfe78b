package tui_test

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// zeroRates are the detail's two rate lines at 0.
var zeroRates = regexp.MustCompile(`(?m)^voluntary/s +0 .*\n^involuntary/s +0 `)

// agoSeconds is the "(Ns ago)" of the exit line, -1 when there is none.
func agoSeconds(pane string) int {
	m := regexp.MustCompile(`exited between \S+ and \S+ \((\d+)s ago\)`).FindStringSubmatch(pane)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestDetailOfExitedThreadInTmux opens the detail view of a real thread
// that wakes every millisecond, ends the thread, and checks that the view
// stays on it and says it exited, when, and rates 0, refresh after
// refresh; then the same for a thread whose whole process exits.
func TestDetailOfExitedThreadInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; this end-to-end test drives the real terminal UI through it")
	}
	bin := testutil.Binary(t)
	b := testutil.StartBrief(t)
	a, pid := strconv.Itoa(b.A), strconv.Itoa(b.PID)

	// The whole host, not -p: with -p the monitor ends with its process.
	x := startTmux(t, "exit", 100, 30, bin+" -d 0.5")
	x.waitFor("the table", contains("TOTAL/s"))
	x.run("send-keys", "-t", "e2e", "/", "brief-a", "Enter")
	x.waitFor("brief-a's row", contains("/brief-a", " "+a+" "))
	x.run("send-keys", "-t", "e2e", "Enter")
	x.waitFor("brief-a's detail", func(p string) bool {
		return strings.Contains(p, "thread "+a+" brief-a") && strings.Contains(p, "state ") && !zeroRates.MatchString(p)
	})

	if err := b.EndA(); err != nil {
		t.Fatal(err)
	}
	p := x.waitFor("brief-a marked exited", contains("thread "+a+" brief-a", "EXITED", "thread exited between", "state exited"))
	if !zeroRates.MatchString(p) {
		t.Errorf("the exited thread's rates are not 0:\n%s", p)
	}
	first := agoSeconds(p)
	// Refreshes later it is still the thread shown, still marked, and
	// the exit further back.
	time.Sleep(2500 * time.Millisecond)
	p = x.pane()
	if !strings.Contains(p, "thread "+a+" brief-a") || !strings.Contains(p, "EXITED") || !zeroRates.MatchString(p) {
		t.Errorf("refreshes after the exit, the detail no longer shows brief-a exited:\n%s", p)
	}
	if later := agoSeconds(p); first < 0 || later < first+1 {
		t.Errorf("the exit was %ds ago, then %ds ago 2.5 s later:\n%s", first, later, p)
	}
	checkFits(t, p, 100, 30)

	// Back to the table, and into brief-b, whose process then ends.
	x.run("send-keys", "-t", "e2e", "Escape")
	x.waitFor("the table", contains("TOTAL/s"))
	x.run("send-keys", "-t", "e2e", "Escape")
	x.waitFor("the filter to clear", func(p string) bool { return !strings.Contains(p, "/brief-a") })
	x.run("send-keys", "-t", "e2e", "/", "brief-b", "Enter")
	x.waitFor("brief-b's row", contains("/brief-b", " "+strconv.Itoa(b.B)+" "))
	x.run("send-keys", "-t", "e2e", "Enter")
	x.waitFor("brief-b's detail", contains("thread "+strconv.Itoa(b.B)+" brief-b"))
	if err := b.End(); err != nil {
		t.Fatal(err)
	}
	p = x.waitFor("brief-b's process marked exited", contains("thread "+strconv.Itoa(b.B)+" brief-b", "EXITED", "process "+pid+" exited between", "state exited"))
	if !zeroRates.MatchString(p) {
		t.Errorf("the exited thread's rates are not 0:\n%s", p)
	}
}
