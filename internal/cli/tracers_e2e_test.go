package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// wantUnavailableLines checks stderr says once per tracer named, in one
// line, what is missing, and no more about any tracer.
func wantUnavailableLines(t *testing.T, stderr string, tracers ...string) {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "unavailable") {
			lines = append(lines, l)
		}
	}
	if len(lines) != len(tracers) {
		t.Errorf("stderr has %d lines, want %d (one per tracer):\n%s", len(lines), len(tracers), stderr)
		return
	}
	for i, name := range tracers {
		if want := "ctxtop: " + name + " unavailable: needs root, or CAP_BPF and CAP_PERFMON"; !strings.HasPrefix(lines[i], want) {
			t.Errorf("stderr line %d = %q, want it to start %q", i+1, lines[i], want)
		}
	}
}

// The tracers asked for and unavailable are said once on stderr, the same
// way in every mode, and the mode goes on without them (docs/wakeups.md,
// docs/stacks.md).
func TestBatchStacksWithoutPrivilege(t *testing.T) {
	stdout, stderr := runAsNobody(t, "-b", "--wakeups", "--stacks", "-n", "1", "-d", "0.2")
	wantUnavailableLines(t, stderr.String(), "wake-ups", "stacks")
	if !strings.Contains(stdout.String(), "cs/s") {
		t.Errorf("want a report without the tracers:\n%s", stdout.String())
	}
}

func TestRecordTracersWithoutPrivilege(t *testing.T) {
	stdout, stderr := runAsNobody(t, "record", "--wakeups", "--stacks", "-o", "-", "-d", "0.2", "--duration", "0.4")
	wantUnavailableLines(t, stderr.String(), "wake-ups", "stacks")
	if stdout.Len() == 0 {
		t.Errorf("record wrote nothing without the tracers")
	}
}

// TestMonitorStacksWithoutPrivilege runs the monitor as nobody in a tmux
// of its own: the line is written before the screen is taken, and is
// there on quitting.
func TestMonitorStacksWithoutPrivilege(t *testing.T) {
	bin := nobodyBinary(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux")
	}
	errFile := filepath.Join(filepath.Dir(bin), "stderr")
	sock := fmt.Sprintf("ctxtop-tracers-%d", os.Getpid())
	tmux := func(args ...string) error {
		return exec.Command("tmux", append([]string{"-L", sock}, args...)...).Run()
	}
	t.Cleanup(func() { tmux("kill-server") })
	cmd := fmt.Sprintf("setpriv --reuid 65534 --regid 65534 --clear-groups %s --no-config --stacks 2>%s", bin, errFile)
	if err := tmux("new-session", "-d", "-x", "120", "-y", "30", "-s", "e2e", cmd); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if err := tmux("send-keys", "-t", "e2e", "q"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); tmux("has-session", "-t", "e2e") == nil; {
		if time.Now().After(deadline) {
			t.Fatal("the monitor did not quit on q")
		}
		time.Sleep(50 * time.Millisecond)
	}
	b, err := os.ReadFile(errFile)
	if err != nil {
		t.Fatal(err)
	}
	wantUnavailableLines(t, string(b), "stacks")
}
