package tui_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// TestColumnsKeptInTmux hides a column in the real binary's columns panel,
// quits, and starts again: the column is still hidden; --no-config shows
// it, and leaves the file alone.
func TestColumnsKeptInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; this end-to-end test drives the real terminal UI through it")
	}
	bin := testutil.Binary(t)
	cfg := t.TempDir()
	x := startTmux(t, "columns", 80, 24, "sh")
	run := func(args string) {
		x.run("send-keys", "-t", "e2e", "clear; XDG_CONFIG_HOME="+cfg+" "+bin+" -d 0.5 "+args+"; echo EXITED $?", "Enter")
	}
	keys := func(k ...string) { x.run(append([]string{"send-keys", "-t", "e2e"}, k...)...) }

	run("")
	x.waitFor("the table", contains("TOTAL/s", "NVCSW/s"))
	keys("F2")
	x.waitFor("the columns panel", contains("thread columns", "[x] NVCSW/s"))
	// PID TID COMM CONTAINER POD CSW/s NVCSW/s: six down.
	for range 6 {
		keys("Down")
	}
	keys("Space")
	x.waitFor("NVCSW/s off", contains("[ ] NVCSW/s"))
	keys("Escape")
	p := x.waitFor("the table without NVCSW/s", func(p string) bool {
		return strings.Contains(p, "TOTAL/s") && !strings.Contains(p, "columns") && !strings.Contains(p, "NVCSW/s")
	})
	if !strings.Contains(p, "CSW/s") {
		t.Errorf("hiding NVCSW/s took CSW/s too:\n%s", p)
	}
	checkFits(t, p, 80, 24)
	keys("q")
	x.waitFor("the exit", contains("EXITED 0"))
	saved, err := os.ReadFile(filepath.Join(cfg, "ctxtop", "settings.json"))
	if err != nil {
		t.Fatalf("no settings after quitting: %v", err)
	}
	if !strings.Contains(string(saved), `"NVCSW/s"`) {
		t.Errorf("settings lack the hidden column:\n%s", saved)
	}

	// The next run starts with it hidden.
	run("")
	p = x.waitFor("the table", contains("TOTAL/s", "CSW/s"))
	if strings.Contains(p, "NVCSW/s") {
		t.Errorf("NVCSW/s shows again after a restart:\n%s", p)
	}
	keys("q")
	x.waitFor("the second exit", contains("EXITED 0"))

	// --no-config shows every column and leaves the file alone.
	run("--no-config")
	x.waitFor("the default columns", contains("TOTAL/s", "NVCSW/s"))
	keys("q")
	x.waitFor("the third exit", contains("EXITED 0"))
	after, err := os.ReadFile(filepath.Join(cfg, "ctxtop", "settings.json"))
	if err != nil || string(after) != string(saved) {
		t.Errorf("--no-config changed the settings:\nbefore %s\nafter %s (%v)", saved, after, err)
	}
}
