package tui_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// A filter and view saved by an earlier run are applied at start: the
// monitor says so, so that a user who forgot them does not take a partial
// or empty table for the host's, at 80x24 and at 40x10.
func TestSavedViewIsAnnouncedInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; this end-to-end test drives the real terminal UI through it")
	}
	bin := testutil.Binary(t)
	cfg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfg, "ctxtop"), 0o755); err != nil {
		t.Fatal(err)
	}
	saved := `{"view": "processes", "filter": "zzq-none"}`
	if err := os.WriteFile(filepath.Join(cfg, "ctxtop", "settings.json"), []byte(saved), 0o644); err != nil {
		t.Fatal(err)
	}
	x := startTmux(t, "saved", 80, 24, "sh")
	x.run("send-keys", "-t", "e2e", "clear; XDG_CONFIG_HOME="+cfg+" "+bin+" -d 0.5; echo EXITED $?", "Enter")
	p := x.waitFor("the table", contains("THR", "TOTAL/s"))
	lines := strings.Split(strings.TrimRight(p, "\n"), "\n")
	if f, want := lines[len(lines)-1], `last run's view: processes, filter "zzq-none" (--no-config ignores it)`; !strings.Contains(f, want) {
		t.Errorf("footer %q does not say %q", f, want)
	}
	if !strings.Contains(lines[0], "processes /zzq-none") {
		t.Errorf("header %q does not show the view and filter", lines[0])
	}
	x.run("resize-window", "-t", "e2e", "-x", "40", "-y", "10")
	p = x.waitFor("the 40x10 layout", func(p string) bool { return maxWidth(p) <= 40 && strings.Contains(p, "THR") })
	checkFits(t, p, 40, 10)
	if !strings.Contains(p, `last run's view: processes, filter`) {
		t.Errorf("at 40x10 the footer does not say the view was restored:\n%s", p)
	}
	// The next key is the user's: the note gives way to the keys.
	x.run("send-keys", "-t", "e2e", "Escape")
	x.waitFor("the filter cleared and the note gone", func(p string) bool {
		return !strings.Contains(p, "zzq-none") && !strings.Contains(p, "last run's view")
	})
	x.run("send-keys", "-t", "e2e", "q")
	x.waitFor("the exit", contains("EXITED 0"))
}
