package tui_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// The load panel runs pool as a person would start it: L, m to pool, s.
// Its threads appear in the table (filtered to them, since a CPU-bound
// pool switches little next to a busy machine's other threads) and are
// the kernel's pool-worker threads; p says the pool takes no pinning.
func TestLoadPanelStartsPoolInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; this end-to-end test drives the real terminal UI through it")
	}
	bin := testutil.Binary(t)
	x := startTmux(t, "e2e-pool", 80, 24, "sh")
	x.run("send-keys", "-t", "e2e", "clear; "+bin+" -d 0.5; echo EXITED $?", "Enter")
	x.waitFor("the monitor", contains("TOTAL/s"))
	x.run("send-keys", "-t", "e2e", "L")
	x.waitFor("the load panel", contains("LOAD m futex"))
	x.run("send-keys", "-t", "e2e", "m", "m", "m")
	x.waitFor("pool in the panel", contains("LOAD m pool, ", "p no pinning", "CPU-bound threads"))
	x.run("send-keys", "-t", "e2e", "s")
	x.run("send-keys", "-t", "e2e", "/", "pool-worker", "Enter")
	// Starting a pool calibrates its work item first; a busy machine is slow.
	var rows []string
	deadline := time.Now().Add(60 * time.Second)
	for {
		p := x.pane()
		rows = rows[:0]
		for _, r := range tableRows(p) {
			// PID TID COMM ... WHY: this monitor's own load, not another
			// pool on the machine, nor the filter's "nothing matches".
			if f := strings.Fields(r); len(f) > 2 && f[2] == "pool-worker" && strings.HasSuffix(r, "load generator") {
				rows = append(rows, r)
			}
		}
		if len(rows) > 0 && strings.Contains(p, "items/s") {
			checkFits(t, p, 80, 24)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pool-worker rows and items/s after 60 s:\n%s", p)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, r := range rows {
		var pid, tid int
		if _, err := fmt.Sscan(r, &pid, &tid); err != nil {
			t.Fatalf("row %q: %v", r, err)
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/comm", pid, tid))
		if err != nil || strings.TrimSpace(string(b)) != "pool-worker" {
			t.Errorf("row %q: the kernel has thread %d/%d as %q (%v), want pool-worker", r, pid, tid, b, err)
		}
	}
	x.run("send-keys", "-t", "e2e", "p")
	x.waitFor("p to say why it does nothing", contains("pool mode cannot be pinned"))
	x.run("send-keys", "-t", "e2e", "s")
	x.waitFor("the pool to stop", contains("stopped"))
	x.run("send-keys", "-t", "e2e", "q")
	x.waitFor("ctxtop to exit", contains("EXITED 0"))
}
