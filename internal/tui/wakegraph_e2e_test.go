package tui_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/stacks"
	"github.com/ctxtop/ctxtop/internal/testutil"
	"github.com/ctxtop/ctxtop/internal/waketrace"
)

// bpfFDs counts a process's BPF descriptors (programs, maps, links).
func bpfFDs(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if l, _ := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), e.Name())); strings.HasPrefix(l, "anon_inode:bpf") {
			n++
		}
	}
	return n
}

// TestWakeupViewInTmux drives W in the real binary: the pairs of a ping-pong
// show with their cross-CPU share, Enter opens the wakee's detail with its
// waker, and the programs are attached only while the view is open.
func TestWakeupViewInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	if err := waketrace.Check(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("path: BPF unavailable under CI: %v", err)
		}
		t.Skipf("path: skipped, %v", err)
	}
	t.Log("path: real BPF programs")
	bin := testutil.Binary(t)
	ppid, _ := testutil.StartPingPong(t)

	x := startTmux(t, "wake", 80, 24, bin+" -d 0.5 -p "+strconv.Itoa(ppid))
	x.waitFor("the table", contains("pp-ping", "TOTAL/s"))
	pid, err := strconv.Atoi(strings.TrimSpace(x.run("display-message", "-p", "-t", "e2e", "#{pane_pid}")))
	if err != nil {
		t.Fatal(err)
	}
	// The task walk (the sampler's, when root) holds descriptors of its
	// own for good; the tracer's come on top of them.
	base := bpfFDs(t, pid)

	x.run("send-keys", "-t", "e2e", "W")
	p := x.waitFor("the ping-pong pairs", func(p string) bool {
		return strings.Contains(p, "WAKEE") && strings.Contains(p, "pp-ping      →") && strings.Contains(p, "pp-pong      →")
	})
	checkFits(t, p, 80, 24)
	if n := bpfFDs(t, pid); n <= base {
		t.Errorf("wake-up view open, yet %d BPF descriptors, as many as the table view's %d", n, base)
	}

	x.run("send-keys", "-t", "e2e", "/", "pp-pong", "Enter")
	x.waitFor("the filter", contains("/pp-pong"))
	x.run("send-keys", "-t", "e2e", "Enter")
	p = x.waitFor("the wakee's detail with its waker", contains("▍thread", "woken by", "wakes"))
	// The thread's own title names it too: look only at its wakers.
	if !strings.Contains(testutil.Between(p, "woken by", "wakes"), "pp-p") {
		t.Errorf("detail lists no ping-pong waker:\n%s", p)
	}
	x.run("send-keys", "-t", "e2e", "Escape")
	x.waitFor("the wake-up view again", contains("WAKEE", "/pp-pong"))

	x.run("send-keys", "-t", "e2e", "W")
	x.waitFor("the table again", contains("TOTAL/s"))
	// The detail view above traced the thread's stacks too; their
	// collector keeps its programs loaded, detached, for stacks.KeepLoaded
	// after the detail closed, so everything is gone only after that.
	deadline := time.Now().Add(5*time.Second + stacks.KeepLoaded)
	for bpfFDs(t, pid) != base {
		if time.Now().After(deadline) {
			t.Fatalf("closing the view left %d BPF descriptors, the table view holds %d", bpfFDs(t, pid), base)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
