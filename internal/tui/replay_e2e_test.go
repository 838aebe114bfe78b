package tui_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/testutil"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// TestReplayInTmux opens a recording with a storm at 10:01:40 and drives
// the time keys as a person would.
func TestReplayInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; this end-to-end test drives the real terminal UI through it")
	}
	bin := testutil.Binary(t)
	file := filepath.Join(t.TempDir(), "storm.ctxrec")
	if err := tuitest.ReplayFile(file, 180, 100, 106); err != nil {
		t.Fatal(err)
	}
	x := startTmux(t, "replay-e2e", 80, 24, "sh")
	x.run("send-keys", "-t", "e2e", "clear; "+bin+" replay "+file+"; echo EXITED $?", "Enter")

	// It plays from the start, with the recording's host and clock.
	p := x.waitFor("the first samples", contains("replay-host", "10:00:0", "replay 1×", "▶ 1×", "/180"))
	checkFits(t, p, 80, 24)

	x.run("send-keys", "-t", "e2e", "Space")
	x.waitFor("pause", contains("PAUSED", "⏸"))
	x.run("send-keys", "-t", "e2e", "]")
	p = x.waitFor("the spike", contains("10:01:40", "SPIKE", "100/180"))
	checkFits(t, p, 80, 24)
	x.run("send-keys", "-t", "e2e", "Left")
	x.waitFor("one sample back", contains("10:01:39", "99/180"))
	x.run("send-keys", "-t", "e2e", "Right", "Right")
	x.waitFor("two samples forward", contains("10:01:41", "101/180"))
	x.run("send-keys", "-t", "e2e", "{")
	x.waitFor("a minute back", contains("10:00:4", "/180"))
	x.run("send-keys", "-t", "e2e", "}")
	x.waitFor("a minute forward", contains("10:01:4"))
	x.run("send-keys", "-t", "e2e", "[")
	x.waitFor("back to the spike", contains("10:01:40", "100/180"))

	// The table's keys still work in a replay.
	x.run("send-keys", "-t", "e2e", "H")
	x.waitFor("the process view", contains("THR", "processes"))
	x.run("send-keys", "-t", "e2e", "H")

	x.run("send-keys", "-t", "e2e", "9", "Space")
	x.waitFor("playing at 9×", contains("▶ 9×", "replay 9×"))
	x.waitFor("playback to move on", func(p string) bool { return !strings.Contains(p, "100/180") })

	x.run("send-keys", "-t", "e2e", "q")
	x.waitFor("ctxtop to exit", contains("EXITED 0"))
}

// TestLiveMonitorRecords runs the live monitor with --record: the samples
// it showed are in the file when it quits, and replay as batch reports.
func TestLiveMonitorRecords(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; this end-to-end test drives the real terminal UI through it")
	}
	bin := testutil.Binary(t)
	file := filepath.Join(t.TempDir(), "live.ctxrec")
	x := startTmux(t, "record-e2e", 80, 24, "sh")
	// Only this test's process: a pass over a host of 20,000 busy tasks
	// can take longer than the second below.
	x.run("send-keys", "-t", "e2e", fmt.Sprintf("clear; %s -d 0.25 -p %d --record %s; echo EXITED $?", bin, os.Getpid(), file), "Enter")
	x.waitFor("the monitor", contains("TOTAL/s"))
	// Four refreshes on a quiet box; a loaded one may manage fewer, and
	// what is checked is that every one shown is in the file.
	time.Sleep(time.Second)
	x.run("send-keys", "-t", "e2e", "q")
	x.waitFor("ctxtop to exit", contains("EXITED 0"))

	r, err := record.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Notes) > 0 || r.Samples() < 2 {
		t.Fatalf("%d samples recorded in a second at 250 ms, notes %q", r.Samples(), r.Notes)
	}
	out, err := exec.Command(bin, "-o", "json", "--replay", file).CombinedOutput()
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), `"time"`); n != r.Samples()-1 {
		t.Errorf("%d reports from %d samples, want %d:\n%.300s", n, r.Samples(), r.Samples()-1, out)
	}
}
