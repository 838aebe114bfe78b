package tui_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ctxtop/ctxtop/internal/stacks"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// TestReplayedDetailShowsRecordedStacks records a stacks run of a C
// program whose thread "mixed" blocks in reader_loop and consumer_wait,
// woken from writer_loop and producer_put, and opens that thread's detail
// view in a replay: "blocked at", "woken from" and WHY's function come
// from the recording.
func TestReplayedDetailShowsRecordedStacks(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; this end-to-end test drives the real terminal UI through it")
	}
	if err := stacks.Check(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("stack programs unavailable under CI: %v", err)
		}
		t.Skip(err)
	}
	bin := testutil.Binary(t)
	b := testutil.StartBlockers(t)
	file := filepath.Join(t.TempDir(), "stacks.ctxrec")
	if out, err := exec.Command(bin, "record", "--stacks", "-o", file, "-d", "0.5", "--duration", "3", "-p", strconv.Itoa(b.PID)).CombinedOutput(); err != nil {
		t.Fatalf("record --stacks: %v\n%s", err, out)
	}
	x := startTmux(t, "replay-stacks-e2e", 120, 40, "sh")
	x.run("send-keys", "-t", "e2e", "clear; "+bin+" replay "+file+"; echo EXITED $?", "Enter")
	x.waitFor("the replay", contains("replay 1×", "mixed"))
	x.run("send-keys", "-t", "e2e", "/")
	x.run("send-keys", "-t", "e2e", "-l", "mixed")
	x.run("send-keys", "-t", "e2e", "Enter")
	x.run("send-keys", "-t", "e2e", "Enter")
	p := x.waitFor("the recorded stacks in the detail view", contains("thread", "blocked at", "reader_loop", "consumer_wait", "woken from", "producer_put", "(driver)", "% in "))
	checkFits(t, p, 120, 40)
	x.run("send-keys", "-t", "e2e", "q")
	x.waitFor("ctxtop to exit", contains("EXITED 0"))
}
