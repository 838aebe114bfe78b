package tui_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// findByEnv is the PID of the process running bin whose environment holds
// mark, or 0.
func findByEnv(bin, mark string) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		if exe, err := os.Readlink(d + "/exe"); err != nil || exe != bin {
			continue
		}
		env, err := os.ReadFile(d + "/environ")
		if err != nil || !bytes.Contains(env, []byte(mark)) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		return pid
	}
	return 0
}

// alive: the process exists and is not a zombie awaiting its reaper.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// TestMonitorExitsWhenTerminalVanishes is issue 18's reproduction: the
// monitor under setsid -w has no controlling terminal, so killing the tmux
// server sends it no SIGHUP; its pty reads EIO and writes fail. It used to
// run on for hours drawing into EIO at nice -20; it must now be gone soon
// after the server is.
func TestMonitorExitsWhenTerminalVanishes(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; this end-to-end test needs a terminal to take away")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid is not installed")
	}
	bin, err := filepath.EvalSymlinks(testutil.Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	mark := fmt.Sprintf("CTXTOP_LOST_E2E=%d-%d", os.Getpid(), time.Now().UnixNano())
	socket := fmt.Sprintf("ctxtop-lost-%d", os.Getpid())
	tm := func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-L", socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := tm("new-session", "-d", "-x", "80", "-y", "24", "-e", mark, "-e", ownConfig(t), "setsid -w "+bin); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = tm("kill-server") })

	// Up and drawing first: a monitor that died on its own proves nothing.
	var pid int
	deadline := time.Now().Add(15 * time.Second)
	for {
		pane, _ := tm("capture-pane", "-p")
		if pid == 0 {
			pid = findByEnv(bin, strings.SplitN(mark, "=", 2)[1])
		}
		if pid != 0 && strings.Contains(pane, "cs/s") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("monitor not up (pid %d); the pane shows:\n%s", pid, pane)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Cleanup(func() {
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	if out, err := tm("kill-server"); err != nil {
		t.Fatalf("tmux kill-server: %v\n%s", err, out)
	}
	killed := time.Now()
	// The hung-up pty answers the monitor's blocked read at once and its
	// next frame at the latest one refresh (1 s) later; 10 s leaves a
	// loaded machine room without letting a monitor that never notices pass.
	for alive(pid) {
		if time.Since(killed) > 10*time.Second {
			t.Fatalf("ctxtop (pid %d) still running %v after its terminal's tmux server was killed", pid, time.Since(killed).Round(time.Millisecond))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("ctxtop gone %v after the server", time.Since(killed).Round(time.Millisecond))
}
